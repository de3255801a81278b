// Raw HTTP for the dashboard tests: fetch() would normalise "/../x" before sending it, so requests
// go through node:http with the path exactly as given. Also a small server-sent-events reader.
import http from 'node:http';

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export function request(
  url: string,
  path: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: hostname, port, path, method: options.method ?? 'GET', headers: options.headers },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

export async function getJson<T = any>(url: string, path: string): Promise<T> {
  const res = await request(url, path);
  if (res.status !== 200) throw new Error(`${path}: HTTP ${res.status}`);
  return JSON.parse(res.body) as T;
}

export interface SseEvent {
  event: string;
  data: any;
}

export interface EventStream {
  /** Resolves with the first event (already received or still to come) that matches. */
  waitFor(match: (e: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  events: SseEvent[];
  close(): void;
}

export function openEvents(url: string): Promise<EventStream> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const events: SseEvent[] = [];
    const waiters = new Set<() => void>();
    const req = http.get({ host: hostname, port, path: '/api/events' }, (res) => {
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data !== undefined) events.push({ event, data: JSON.parse(data) });
        }
        for (const w of waiters) w();
      });
      resolve({
        events,
        waitFor(match, timeoutMs = 10_000) {
          return new Promise((ok, fail) => {
            const check = () => {
              const found = events.find(match);
              if (!found) return;
              waiters.delete(check);
              clearTimeout(timer);
              ok(found);
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`no matching event within ${timeoutMs} ms; got ${events.map((e) => e.event).join(', ')}`));
            }, timeoutMs);
            waiters.add(check);
            check();
          });
        },
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
  });
}
