// A fake Claude usage endpoint on 127.0.0.1 for budget tests: answers from a script (the last step repeats),
// records every request (path, headers) so tests can count them and check what was sent.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';

export interface UsageStep {
  status?: number;
  /** An object is sent as JSON; a string as is. */
  body?: unknown;
  /** Hold the answer this long (for timeout tests). */
  delayMs?: number;
}

export interface UsageServer {
  url: string;
  requests: { path: string; headers: IncomingHttpHeaders }[];
  /** Replace the rest of the script (e.g. usage rises between iterations). */
  script: UsageStep[];
  close(): Promise<void>;
}

/** The body the real endpoint answers with; utilisations in percent, resets as Dates (or null). */
export function usageBody(
  fiveHour: number,
  sevenDay: number,
  resets: { fiveHour?: Date | null; sevenDay?: Date | null } = {},
): object {
  const iso = (d: Date | null | undefined, fallbackMs: number) =>
    d === null ? null : (d ?? new Date(Date.now() + fallbackMs)).toISOString();
  return {
    five_hour: { utilization: fiveHour, resets_at: iso(resets.fiveHour, 2 * 3_600_000) },
    seven_day: { utilization: sevenDay, resets_at: iso(resets.sevenDay, 3 * 86_400_000) },
    seven_day_opus: null,
    extra_usage: { is_enabled: false, monthly_limit: null, used_credits: null, utilization: null },
  };
}

/** Starts the server; it is closed when the current test finishes. */
export async function startUsageServer(script: UsageStep[]): Promise<UsageServer> {
  const state = { script: [...script], served: 0 };
  const requests: UsageServer['requests'] = [];
  const server: Server = createServer((req, res) => {
    requests.push({ path: req.url ?? '', headers: req.headers });
    const step = state.script[Math.min(state.served++, state.script.length - 1)] ?? { status: 500 };
    const send = () => {
      const body = typeof step.body === 'string' ? step.body : JSON.stringify(step.body ?? {});
      res.writeHead(step.status ?? 200, { 'content-type': 'application/json' });
      res.end(body);
    };
    if (step.delayMs) setTimeout(send, step.delayMs);
    else send();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  onTestFinished(close);
  return {
    url: `http://127.0.0.1:${port}/api/oauth/usage`,
    requests,
    get script() {
      return state.script.slice(state.served);
    },
    set script(steps: UsageStep[]) {
      state.script = [...state.script.slice(0, state.served), ...steps];
    },
    close,
  };
}

/** A URL on 127.0.0.1 where nothing listens (connection refused at once). */
export async function unreachableUsageUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/api/oauth/usage`;
}
