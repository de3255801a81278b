// Subcommand dispatch for ralph.mjs. `run` is the default, so `ralph.mjs 5` and `ralph.mjs run 5` agree; `validate`,
// `status`, `cancel` and `cleanup` work from the repository alone; `hook start` starts a loop inside a Claude Code
// session and `hook stop` is its Stop hook.
import { parseArgs } from 'node:util';
import { runRalph } from './cli/command.js';
import { runHookCommand } from './hook/command.js';
import { validateCommand } from './cli/validate.js';
import { resolveRepoRoot } from './git/git.js';
import { readLoopSummariesOrRefuse, renderLoopTable, renderUnreadableWarnings } from './store/summaries.js';
import { cancelLoop, renderCancelResult, waitForLoopEnd } from './store/cancel.js';
import { cleanupWorktrees, listLeftoverWorktrees, renderLeftovers } from './git/worktree.js';
import type { RunIo } from './types.js';
import { LoopExit, usageExit } from './errors.js';
import { renderTerminalJson } from '../util/ansi.js';

export async function runEngine(argv: string[], io: RunIo): Promise<number> {
  const [first, ...rest] = argv;
  if (first === 'hook') return runHookCommand(rest, io);
  try {
    if (first === 'validate') {
      const { values, positionals } = parseSub(rest, { json: { type: 'boolean' } }, [0, 1]);
      return await validateCommand(positionals[0], values.json === true, io);
    }
    if (first === 'status') return await statusCommand(rest, io);
    if (first === 'cancel') return await cancelCommand(rest, io);
    if (first === 'cleanup') return await cleanupCommand(rest, io);
  } catch (err) {
    if (!(err instanceof LoopExit)) throw err;
    io.stderr(`ralph: ${err.message}\n${err.hint ? `ralph: hint: ${err.hint}\n` : ''}`);
    return err.code;
  }
  return runRalph(first === 'run' ? rest : argv, io);
}

async function statusCommand(argv: string[], io: RunIo): Promise<number> {
  const { values } = parseSub(argv, { json: { type: 'boolean' } }, 0);
  const loops = readLoopSummariesOrRefuse(await resolveRepoRoot(io.cwd));
  for (const line of renderUnreadableWarnings(loops)) io.stderr(`ralph: warning: ${line}\n`);
  const repoRoot = await resolveRepoRoot(io.cwd);
  const leftovers = await listLeftoverWorktrees(repoRoot).catch(() => []);
  io.stdout(
    values.json
      ? `${renderTerminalJson({ loops, leftoverWorktrees: leftovers }, 2)}\n`
      : renderLoopTable(loops) + renderLeftovers(leftovers),
  );
  return 0;
}

/** `cleanup`: removes the worktrees of --worktree loops that are not running (a crash left them), and killed runners' verification checkouts. */
async function cleanupCommand(argv: string[], io: RunIo): Promise<number> {
  parseSub(argv, {}, 0);
  const said = await cleanupWorktrees(await resolveRepoRoot(io.cwd));
  io.stderr(
    said.length
      ? said.map((line) => `ralph: ${line}\n`).join('')
      : 'ralph: nothing of stopped loops to remove (no worktrees, no verification checkouts)\n',
  );
  return 0;
}

async function cancelCommand(argv: string[], io: RunIo): Promise<number> {
  const { positionals } = parseSub(argv, {}, 1);
  const repoRoot = await resolveRepoRoot(io.cwd);
  const result = cancelLoop(repoRoot, positionals[0]);
  if (result.action !== 'signalled') {
    io.stderr(`ralph: ${renderCancelResult(result)}\n`);
    return 0;
  }
  const status = await waitForLoopEnd(repoRoot, result.id, 15_000);
  io.stderr(`ralph: loop ${result.id} ${status === 'running' ? 'was signalled and is stopping' : status}\n`);
  return 0;
}

/** `positionals`: how many (a range [min, max] for an optional one). */
function parseSub<T extends Record<string, { type: 'boolean' | 'string' }>>(
  argv: string[],
  options: T,
  positionals: number | [number, number],
) {
  const [min, max] = typeof positionals === 'number' ? [positionals, positionals] : positionals;
  try {
    const parsed = parseArgs({ args: argv, options, allowPositionals: max > 0, strict: true });
    if (parsed.positionals.length < min) throw new Error('expected a loop id');
    if (parsed.positionals.length > max) throw new Error('unexpected argument');
    return parsed;
  } catch (err) {
    throw usageExit((err as Error).message);
  }
}
