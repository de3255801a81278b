// `ralphkit validate` once commander has parsed it: checks a plan and prints every problem as `file:line:col: message`.
import { ExitError, EXIT, RalphkitError } from '../errors.js';
import { logger } from '../logger.js';
import { runValidate, type ValidateResult } from '../prd/run-validate.js';
import { formatPrdProblem, formatPrdWarning } from '../prd/validate.js';
import { resolveCwdFolder, resolvePlanRoot } from '../cwd.js';
import { sanitizeForTerminal } from '../util/ansi.js';
import type { ValidateCommandOptions } from './validate.js';
import { ralphkitCommand } from '../util/invocation.js';
import { shellQuote } from '../util/shell-quote.js';

const missingHint = (): string =>
  `${ralphkitCommand('install')} creates ralph/prd.json; or name the plan: ${ralphkitCommand('validate path/to/prd.json')}`;

export async function validateAction(file: string | undefined, opts: ValidateCommandOptions): Promise<void> {
  if (opts.cwd !== undefined) resolveCwdFolder(opts.cwd);
  // A named file is where the user points from here; the default plan is the repository's, as the loop reads it.
  const cwd = file === undefined ? await resolvePlanRoot(opts.cwd ?? process.cwd()) : opts.cwd;
  const result = runValidate({ cwd, file });
  if (opts.json) printJson(result);
  else printText(result);
}

function printText(result: ValidateResult): void {
  if (result.note) logger.info(result.note);
  if (result.unreadable) {
    throw new RalphkitError(`${result.file}: ${result.problems[0].message}`, {
      exitCode: EXIT.refused,
      hint: missingHint(),
    });
  }
  if (!result.valid) {
    // Problems and warnings in file order, so each line reads where it points.
    const lines = [
      ...result.problems.map((p) => ({ p, text: formatPrdProblem(p) })),
      ...result.warnings.map((p) => ({ p, text: formatPrdWarning(p) })),
    ];
    lines.sort((a, b) => (a.p.line ?? 0) - (b.p.line ?? 0) || (a.p.col ?? 0) - (b.p.col ?? 0));
    // A problem quotes the plan (an id, a title, a value), which an agent can write.
    for (const line of lines) logger.out(sanitizeForTerminal(line.text));
    const count = result.problems.length;
    throw new RalphkitError(`${count} ${count === 1 ? 'problem' : 'problems'} in ${result.file}`, {
      exitCode: EXIT.refused,
      hint: `fix ${count === 1 ? 'it' : 'them'}, then run: ${ralphkitCommand(`validate ${shellQuote(result.file)}`)}`,
    });
  }
  for (const warning of result.warnings) logger.out(sanitizeForTerminal(formatPrdWarning(warning)));
  const skipped = result.skipped ? `, ${result.skipped} skipped` : '';
  logger.out(
    `${result.file}: valid, ${plural(result.stories!, 'story', 'stories')}, ${result.passing} passing${skipped}`,
  );
  if (!result.hasChecks) logger.warn("no checks in this plan: the runner will take every story on the agent's word");
}

function printJson(result: ValidateResult): void {
  const doc = {
    file: result.file,
    valid: result.valid,
    ...(result.valid ? { stories: result.stories, passing: result.passing, skipped: result.skipped } : {}),
    problems: result.problems,
    warnings: result.warnings,
  };
  if (result.note) logger.info(result.note);
  logger.json(doc);
  if (result.unreadable) logger.hint(missingHint());
  if (!result.valid) throw new ExitError(EXIT.refused);
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}
