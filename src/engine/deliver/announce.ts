// The end of a loop, announced: --on-exit, --notify and --webhook, all at once after the locks are released (a
// command that starts the next loop is not refused by this one's lock). Each is bounded in time and reports a
// failure as one warning; none can change the exit code. Ctrl-C once the loop has ended (`signal`) stops them.
import type { LoopEnding } from '../store/state-types.js';
import type { RunOptions } from '../loop-options.js';
import type { Emit } from '../events.js';
import { renderOnExitEnv, renderSummary, renderTitle } from './summary.js';
import { runOnExit } from './on-exit.js';
import { showDesktopNotification } from './desktop.js';
import { postWebhook } from './webhook.js';

export interface AnnounceInput {
  ending: LoopEnding;
  options: Pick<RunOptions, 'notify' | 'onExit' | 'webhook'>;
  cwd: string;
  env: NodeJS.ProcessEnv;
  emit: Emit;
  signal: AbortSignal;
}

/** Runs every announcement the options ask for, side by side; resolves when the slowest is done or stopped. */
export async function announceEnd(input: AnnounceInput): Promise<void> {
  const { ending, options, emit, signal } = input;
  const warn = (message: string) => emit({ type: 'warn', message });
  const summary = renderSummary(ending);
  const jobs: Promise<void>[] = [];
  if (options.onExit) {
    const env = { ...input.env, ...renderOnExitEnv(ending) };
    jobs.push(
      runOnExit({
        command: options.onExit,
        cwd: input.cwd,
        env,
        signal,
        warn,
        show: (line) => emit({ type: 'info', message: `on-exit: ${line}` }),
      }),
    );
  }
  if (options.notify) jobs.push(showDesktopNotification(renderTitle(ending), summary, input.env, signal, warn));
  if (options.webhook) jobs.push(postWebhook(options.webhook, summary, signal, warn));
  await Promise.all(jobs);
}
