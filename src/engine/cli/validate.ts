// `ralph.mjs validate [file] [--json]` (`./ralph/ralph.sh validate`): the plan checked by the engine the repository
// already has, so what the installed files tell an agent to run works from a clone, with no ralphkit to fetch. The
// same checks as `ralphkit validate` (prd/run-validate.ts), printed as the engine prints: plain text, no colours.
import { runValidate, type ValidateResult } from '../../prd/run-validate.js';
import { formatPrdProblem, formatPrdWarning } from '../../prd/validate.js';
import { sanitizeForTerminal, renderTerminalJson } from '../../util/ansi.js';
import { loopCommand } from '../../util/invocation.js';
import { resolvePlanRootAt } from '../git/git.js';
import { LoopExit, LOOP_EXIT } from '../errors.js';
import type { RunIo } from '../types.js';

export async function validateCommand(file: string | undefined, json: boolean, io: RunIo): Promise<number> {
  // The default plan is the repository's, as the loop reads it; a named file is where the user points from here.
  const result = runValidate({ cwd: file === undefined ? await resolvePlanRootAt(io.cwd) : io.cwd, file });
  if (result.note) io.stderr(`ralph: ${result.note}\n`);
  if (json)
    io.stdout(
      `${renderTerminalJson({ file: result.file, valid: result.valid, ...(result.valid ? { stories: result.stories, passing: result.passing, skipped: result.skipped } : {}), problems: result.problems, warnings: result.warnings }, 2)}\n`,
    );
  else printText(result, io);
  if (result.unreadable)
    throw new LoopExit(
      LOOP_EXIT.refused,
      json ? 'the plan could not be read' : `${result.file}: ${result.problems[0].message}`,
      `name the plan: ${loopCommand('validate path/to/prd.json')}`,
    );
  if (!result.valid) {
    const count = result.problems.length;
    throw new LoopExit(
      LOOP_EXIT.refused,
      `${count} ${count === 1 ? 'problem' : 'problems'} in ${result.file}`,
      `fix ${count === 1 ? 'it' : 'them'}, then run: ${loopCommand(`validate ${result.file}`)}`,
    );
  }
  return 0;
}

function printText(result: ValidateResult, io: RunIo): void {
  if (result.unreadable) return;
  // Problems and warnings in file order, so each line reads where it points; they quote the plan, which an agent can write.
  const lines = [
    ...result.problems.map((p) => ({ p, text: formatPrdProblem(p) })),
    ...result.warnings.map((p) => ({ p, text: formatPrdWarning(p) })),
  ];
  lines.sort((a, b) => (a.p.line ?? 0) - (b.p.line ?? 0) || (a.p.col ?? 0) - (b.p.col ?? 0));
  for (const line of lines) io.stdout(`${sanitizeForTerminal(line.text)}\n`);
  if (!result.valid) return;
  const skipped = result.skipped ? `, ${result.skipped} skipped` : '';
  io.stdout(
    `${result.file}: valid, ${result.stories} ${result.stories === 1 ? 'story' : 'stories'}, ${result.passing} passing${skipped}\n`,
  );
  if (!result.hasChecks)
    io.stderr("ralph: warning: no checks in this plan: the runner will take every story on the agent's word\n");
}
