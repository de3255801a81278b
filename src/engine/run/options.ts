// Option rules that hold both for a command line and for a resumed loop's options merged with the typed ones:
// --parallel's implied and refused options, and the webhook URL (from --webhook or RALPH_WEBHOOK_URL).
import type { RunOptions } from '../loop-options.js';
import { usageExit } from '../errors.js';

/**
 * --parallel runs in worktrees (one per worker, and one for the merge queue), so it implies --worktree; the options it
 * does not support yet are refused by name rather than ignored. Also checked on resume (run.ts), where `--parallel`
 * comes from the stored options and the others may be typed.
 */
export function refuseParallelOptions(options: RunOptions, given: Set<keyof RunOptions>, resumedId?: string): void {
  if (options.parallel === undefined) return;
  options.worktree = true;
  given.add('worktree');
  const unsupported: [boolean, string][] = [
    [options.verifyInPlace, '--verify-in-place'],
    [options.deliver !== 'commit', `--deliver ${options.deliver}`],
    [Boolean(options.reviewAgent || options.reviewCmd), '--review-agent/--review-cmd'],
    [options.waitNextSession || options.wait, '--wait/--wait-next-session'],
  ];
  const refused = unsupported.filter(([on]) => on).map(([, flag]) => flag);
  const them = refused.length === 1 ? 'it' : 'them';
  // A resumed run keeps its --parallel: only the other options can go.
  const hint = resumedId
    ? `resume it without ${them}: ./ralph/ralph.sh --resume ${resumedId}`
    : `run the plan with one loop (without --parallel) to use ${them}`;
  if (refused.length) throw usageExit(`--parallel cannot be combined with ${refused.join(', ')} yet`, hint);
}

/** --webhook, else RALPH_WEBHOOK_URL: unlike an argument, a variable does not show in `ps` to other local users. */
export function withWebhookFromEnv(options: RunOptions, env: NodeJS.ProcessEnv): RunOptions {
  const fromEnv = env.RALPH_WEBHOOK_URL;
  return options.webhook || !fromEnv ? options : { ...options, webhook: webhookUrl(fromEnv, 'RALPH_WEBHOOK_URL') };
}

// The URL is a secret (it is the webhook's only key): a refusal says what is wrong with it, never what it is.
export function webhookUrl(value: string, source = '--webhook'): string {
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {
    /* said below */
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw usageExit(
      `${source} needs an https:// (or http://) URL; the value given is not one (not shown here: a webhook URL is a secret)`,
      'copy the incoming webhook URL from Slack, Discord (add /slack at its end) or Mattermost',
    );
  }
  return value;
}
