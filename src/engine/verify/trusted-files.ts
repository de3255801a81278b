// The runner's own files and git's configuration, held against the agent, its checks and its reviewer (SPEC §6):
// what any of them changed is put back as it was when the loop started, said in the log and in progress.txt, and a
// change that could run code (the engine, a hook, .git/config) rejects the claims judged with it.
import { appendOwnFileSync } from '../../util/atomic.js';
import type { RunContext } from '../types.js';
import type { Violation } from './types.js';
import { guardWrite } from '../errors.js';
import { renderGuardBlock } from './report.js';
import { restoreRunnerFiles } from './runner-guard.js';
import { runsCode } from './guard-config.js';
import type { RunTrust } from './trust.js';

/**
 * The engine, its launcher, the manifest, .git/config and the hooks as they were when the loop started: anything the
 * agent changed there is put back now, and the iteration's claims are rejected for it.
 */
export function guardRunnerFiles(
  run: RunContext,
  trust: RunTrust,
  iteration: number,
  who: 'the agent' | 'the checks' | 'the reviewer' = 'the agent',
): Violation | undefined {
  const { changed, rejecting, kept, inRepo } =
    who === 'the agent' ? restoreRunnerFiles(trust.guard) : restoreRunnerFiles(trust.guard, runsCode);
  const shown = (items: string[]) =>
    items.slice(0, 10).join(', ') + (items.length > 10 ? `, and ${items.length - 10} more` : '');
  const agentCode = who === 'the checks' ? " (the agent's code they ran)" : '';
  if (kept.length)
    run.emit({
      type: 'info',
      iteration,
      message: `kept the git settings ${who === 'the agent' ? "the agent's git commands" : who} recorded (${shown(kept)})`,
    });
  if (!changed.length) return undefined;
  const harmless =
    who === 'the agent'
      ? "they never run in the runner's own git calls or checks"
      : "none of them runs a command or changes what the runner's git does";
  const consequence = rejecting.length
    ? ", and this iteration's claims are rejected"
    : ` (${harmless}, so the claims are judged as usual)`;
  run.emit({
    type: 'warn',
    iteration,
    message: `${who}${agentCode} changed files the runner trusts (${shown(changed)}); put them back as they were when the loop started${consequence}`,
  });
  const block = renderGuardBlock(new Date(), iteration, changed, rejecting.length > 0);
  guardWrite(
    run.paths.progress,
    run.paths.repoRoot,
    () => appendOwnFileSync(run.paths.progress, block),
    'the note about the restored runner files could not be written',
  );
  return rejecting.length
    ? {
        reason: `${who}${agentCode} changed files the runner trusts (${shown(rejecting)}); they were put back`,
        files: inRepo,
      }
    : undefined;
}
