// One open event stream, written with backpressure. A page that reads keeps up and gets every update;
// one that stops reading (a sleeping laptop, a stuck tab, a socket nobody reads) is not sent more than
// the socket takes: while its queue has not drained, it keeps only the newest event of each kind, and
// one whose queue holds too much or does not move for a while is closed. EventSource reconnects by
// itself and gets the whole current state again, so nothing is lost by dropping it.
import type { ServerResponse } from 'node:http';

export interface SseLimits {
  /** Unsent bytes one client may hold when the next update comes; more, and it is closed. */
  maxHeldBytes: number;
  /** A client whose queue has not shrunk for this long is closed. */
  stallMs: number;
}

export const SSE_LIMITS: Readonly<SseLimits> = { maxHeldBytes: 4 * 1024 * 1024, stallMs: 10_000 };

export interface SseClient {
  /** Writes `event` now, or keeps it as the newest of its kind until the client has drained. */
  send(kind: string, event: Buffer): void;
  /** A comment line for idle timers, skipped while the client is behind (the queue already has bytes). */
  ping(): void;
  /** Closes the client if it is stuck; true when it was. */
  sweep(now: number): boolean;
  end(): void;
}

/** `initial` (the whole current state) is always queued, however big: a client must be able to get it once. */
export function createSseClient(
  res: ServerResponse,
  initial: [string, Buffer][],
  limits: SseLimits = SSE_LIMITS,
): SseClient {
  const pending = new Map<string, Buffer>();
  // While behind: the queue length last seen and when it last shrank.
  let behind: { held: number; since: number } | null = null;

  const write = (chunk: Buffer | string) => {
    if (res.destroyed) return; // dropped or gone; its 'close' takes it off the hub's list
    if (!res.write(chunk) && !behind) behind = { held: res.writableLength, since: Date.now() };
  };
  const flush = () => {
    behind = null;
    for (const [kind, event] of pending) {
      pending.delete(kind);
      write(event);
      if (behind) return; // the rest waits for the next drain
    }
  };
  res.on('drain', flush);
  const overfull = () => res.writableLength > limits.maxHeldBytes;
  const drop = () => {
    pending.clear();
    res.destroy();
  };
  const queue = (kind: string, event: Buffer) => {
    if (behind) pending.set(kind, event);
    else write(event);
  };
  for (const [kind, event] of initial) queue(kind, event);

  return {
    send(kind, event) {
      if (behind && overfull()) drop();
      else queue(kind, event);
    },
    ping() {
      if (!behind) write(': ping\n\n');
    },
    sweep(now) {
      if (!behind || res.destroyed) return res.destroyed;
      if (res.writableLength < behind.held) behind = { held: res.writableLength, since: now };
      else if (now - behind.since >= limits.stallMs) drop();
      return res.destroyed;
    },
    end() {
      pending.clear();
      res.end();
    },
  };
}
