// The real clock. Sleeping ends early (without an error) when the signal aborts, so Ctrl-C during a pause
// or a rate-limit wait is answered at once.
import type { Clock } from './types.js';

export const realClock: Clock = {
  now: () => new Date(),
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted || ms <= 0) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
    });
  },
};
