// Sits in front of the scripted model server and plays a Claude subscription that hits its 5-hour limit:
// from the first /v1/messages request until `resetAfterMs` later, every request is answered 429 with the
// `anthropic-ratelimit-unified-*` headers the real API sends; afterwards requests pass through untouched.
// With `retryAfterSeconds` it plays a passing API rate limit instead: a plain 429 with `retry-after`, which Claude
// Code waits out and retries by itself (its `api_retry` stream events).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';

export interface LimitProxy {
  url: string;
  /** Epoch seconds of the announced reset, once the first request came. */
  resetAt: number | null;
  rejected: number;
  passed: number;
}

export async function startLimitProxy(
  target: string,
  resetAfterMs: number,
  opts: { retryAfterSeconds?: number } = {},
): Promise<LimitProxy> {
  const state: LimitProxy = { url: '', resetAt: null, rejected: 0, passed: 0 };
  const server = http.createServer((req, res) => {
    const isMessages = (req.url ?? '').split('?')[0] === '/v1/messages';
    if (isMessages && state.resetAt === null) state.resetAt = Math.ceil((Date.now() + resetAfterMs) / 1000);
    if (isMessages && Date.now() < state.resetAt! * 1000) {
      state.rejected++;
      req.resume();
      const subscription = {
        'anthropic-ratelimit-unified-status': 'rejected',
        'anthropic-ratelimit-unified-reset': String(state.resetAt),
        'anthropic-ratelimit-unified-representative-claim': 'five_hour',
        'x-should-retry': 'false',
      };
      const passing = { 'retry-after': String(opts.retryAfterSeconds) };
      res.writeHead(429, {
        'content-type': 'application/json',
        ...(opts.retryAfterSeconds === undefined ? subscription : passing),
      });
      res.end(
        JSON.stringify({
          type: 'error',
          error: {
            type: 'rate_limit_error',
            message: "This request would exceed your account's rate limit. Please try again later.",
          },
        }),
      );
      return;
    }
    if (isMessages) state.passed++;
    const upstream = http.request(
      `${target}${req.url}`,
      { method: req.method, headers: { ...req.headers, host: new URL(target).host } },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    // A client that goes away mid-upload would leave the upstream request open, half-sent, until the test ends.
    req.on('error', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return state;
}
