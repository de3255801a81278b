// Prints a run's result for people (stdout: plan and summary; stderr: warnings and conflicts) or as JSON.
import { RalphkitError, EXIT } from '../errors.js';
import { color, logger } from '../logger.js';
import { select } from '../util/prompt.js';
import { renderConflicts, renderCounts, renderKeptLines, renderPlanLines } from './render.js';
import type { AskConflict, FileRunResult } from './run-files.js';
import { ralphkitCommand } from '../util/invocation.js';
import { renderTerminalJson, sanitizeForTerminal } from '../util/ansi.js';

export interface ReportOptions {
  /** e.g. "install": names the command in the JSON document and in hints (`ralphkit <command>`). */
  command: string;
  json?: boolean;
}

export function renderJson(result: FileRunResult, command: string, extra: Record<string, unknown> = {}): string {
  const doc = {
    command,
    ralphkit: result.version,
    cwd: result.cwd,
    status: result.status,
    exitCode: result.exitCode,
    files: result.plan.items.map((i) => ({
      ...i,
      ...(result.diffs[i.path] !== undefined ? { diff: result.diffs[i.path] } : {}),
    })),
    manifest: { path: result.plan.manifest.path, action: result.plan.manifest.action },
    backups: result.backups,
    warnings: result.warnings,
    ...extra,
  };
  return renderTerminalJson(doc, 2);
}

/** Prints the result; throws (exit 2) when conflicts or an aborted prompt left nothing written. */
export function printResult(result: FileRunResult, options: ReportOptions, extra: Record<string, unknown> = {}): void {
  for (const warning of result.warnings) logger.warn(warning);
  if (options.json) logger.out(renderJson(result, options.command, extra));
  else printText(result, ralphkitCommand(options.command));
  if (result.status === 'conflicts') throw conflictError(result, ralphkitCommand(options.command));
  if (result.status === 'aborted')
    throw new RalphkitError('stopped at the prompt; nothing was written', { exitCode: EXIT.refused });
}

function printText(result: FileRunResult, command: string): void {
  const kept = renderKeptLines(result.plan, command);
  if (result.status === 'nothing-to-do') return printNothingToDo(result, kept);
  const title =
    result.status === 'dry-run'
      ? 'Dry run (nothing written): plan for'
      : result.status === 'written'
        ? 'Installed into'
        : 'Plan for';
  logger.out(`${title} ${result.cwd} (ralphkit ${result.version}):`);
  logger.out(renderPlanLines(result.plan).join('\n'));
  // A diff quotes files an agent can write (the runner, a skill): shown without their control sequences.
  for (const diff of Object.values(result.diffs)) if (diff) logger.out(`\n${sanitizeForTerminal(diff.trimEnd())}`);
  if (result.status === 'written') {
    logger.out(color.success(`Done: ${renderCounts(result.plan)}.`));
    for (const line of kept) logger.out(line);
    for (const b of result.backups) logger.out(`Your edited ${b.path} was saved to ${b.backup}`);
  }
}

function printNothingToDo(result: FileRunResult, kept: string[]): void {
  for (const line of kept) logger.out(line);
  // A file kept over a newer version means the repository is not up to date, so the line does not claim it.
  const behind = result.plan.items.some((i) => i.keptBecause === 'chosen');
  const lead = kept.length ? 'Nothing else to do' : 'Nothing to do';
  logger.out(
    behind
      ? `${lead} in ${result.cwd} (ralphkit ${result.version}).`
      : `${lead}: ${result.cwd} is up to date with ralphkit ${result.version}.`,
  );
}

function conflictError(result: FileRunResult, command: string): RalphkitError {
  const lines = renderConflicts(result.plan, command);
  // Taking a file out (--no-ci) is settled by the same flags plus --force: a plain `install --force` would keep it.
  const removing = result.plan.items.some((i) => i.action === 'conflict' && i.removing);
  const force = removing
    ? `\`${command} --no-ci --force\` backs up your files, then removes or replaces them`
    : `\`${command} --force\` backs up your files and installs ralphkit's`;
  return new RalphkitError(
    `${lines.length} ${lines.length === 1 ? 'file conflicts' : 'files conflict'}; nothing was written:\n${lines.join('\n')}`,
    {
      exitCode: EXIT.refused,
      hint: `${Object.keys(result.diffs).length ? '' : `\`${command} --diff\` shows the changes; `}${force}`,
    },
  );
}

/** With --json, a refusal or error still yields one JSON document on stdout; the error then goes on to src/program.ts. */
export async function withJsonErrors<T>(json: boolean | undefined, command: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (json) printJsonError(err, command);
    throw err;
  }
}

function printJsonError(err: unknown, command: string): void {
  const exitCode = err instanceof RalphkitError ? err.exitCode : EXIT.error;
  const doc = {
    command,
    status: exitCode === EXIT.refused ? 'refused' : 'error',
    exitCode,
    error: err instanceof Error ? err.message : String(err),
    hint: err instanceof RalphkitError ? err.hint : undefined,
  };
  logger.json(doc);
}

/** The prompt shown for each conflict when a person is at the terminal. */
export const askAtTerminal: AskConflict = async (item, diff) => {
  for (;;) {
    // Keeping the user's file comes first, so a hasty Enter loses nothing.
    const answer = await select(`${item.path}: ${item.reason}.`, [
      item.removing
        ? { title: 'Keep mine', value: 'keep', description: 'leave your file; ralphkit stops managing it' }
        : { title: 'Keep mine', value: 'keep', description: 'leave your file; the new version is not installed' },
      item.removing
        ? { title: 'Remove', value: 'overwrite', description: 'back up your file to ralph/.backup/, then remove it' }
        : {
            title: 'Overwrite',
            value: 'overwrite',
            description: 'back up your file to ralph/.backup/, install the new version',
          },
      { title: 'Show the diff', value: 'diff' },
      { title: 'Abort', value: 'abort', description: 'write nothing' },
    ] as const);
    if (answer === undefined) return 'abort';
    if (answer !== 'diff') return answer;
    logger.info(diff ? sanitizeForTerminal(diff) : '(no textual difference)');
  }
};
