// The one polling loop: look, and while the answer is no, wait a little and look again, until a deadline.
// Built-ins only (bundled into ralph.mjs).
export interface PollOptions {
  /** How long to keep looking; the condition is looked at once more at the deadline. */
  timeoutMs: number;
  /** The pause between two looks. */
  intervalMs: number;
}

/**
 * Looks at `done` until it says yes (true) or the time is up (false). The first look is at once; the pause never
 * runs past the deadline, and the condition's last look is at (or just after) it.
 */
export async function pollUntil(done: () => boolean | Promise<boolean>, options: PollOptions): Promise<boolean> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    if (await done()) return true;
    const left = deadline - Date.now();
    if (left <= 0) return false;
    await new Promise((resolve) => setTimeout(resolve, Math.min(options.intervalMs, left)));
  }
}
