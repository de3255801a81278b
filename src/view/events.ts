// Server-sent events: each open page gets the current plan, progress log and loops on connect,
// then whichever of them changed after every change on disk. Each event is encoded once and the same
// bytes go to every client; how much a client that stops reading may hold is src/view/sse-client.ts.
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  readLoopsSnapshot,
  readPrdSnapshot,
  readProgressSnapshot,
  type LoopsSnapshot,
  type ViewPaths,
} from './snapshot.js';
import { createSseClient, type SseClient } from './sse-client.js';
import { isAlive } from '../engine/processes.js';
import { readState } from '../engine/store/state-file.js';

export type EventKind = 'prd' | 'progress' | 'loops';

export interface EventHub {
  connect(req: IncomingMessage, res: ServerResponse): void;
  /** Re-read everything and push what differs from what the pages last got. */
  refresh(): void;
  /** Liveness of the loops last seen running: a loop can die without touching its files. */
  aliveSignature(): string;
  close(): void;
}

/** Comment lines that keep proxies and idle timers from closing a quiet stream. */
const HEARTBEAT_MS = 15_000;
/** How often clients that stopped reading are checked. */
const SWEEP_MS = 2_000;

interface Latest {
  json: string;
  /** The event as sent, shared by every client's queue. */
  event: Buffer;
}

/**
 * `prdJson`: the plan's body as /api/prd serves it (view/memo.ts), so the hub and the endpoint make it once per
 * change between them; default, read each time.
 */
export function createEventHub(
  paths: ViewPaths,
  headers: Record<string, string>,
  prdJson: () => string = () => JSON.stringify(readPrdSnapshot(paths)),
): EventHub {
  const clients = new Set<SseClient>();
  const readers: Record<EventKind, () => string> = {
    prd: prdJson,
    progress: () => JSON.stringify(readProgressSnapshot(paths)),
    loops: () => {
      const value = readLoopsSnapshot(paths);
      running = readRunnerProcesses(paths, value);
      return JSON.stringify(value);
    },
  };
  const kinds = Object.keys(readers) as EventKind[];
  const last = new Map<EventKind, Latest>();
  let running: RunnerProcess[] = [];

  const read = (kind: EventKind): string => readers[kind]();
  const remember = (kind: EventKind, json: string): Latest => {
    const latest = { json, event: Buffer.from(renderEvent(kind, json)) };
    last.set(kind, latest);
    return latest;
  };
  const current = (kind: EventKind): Latest => last.get(kind) ?? remember(kind, read(kind));
  const heartbeat = setInterval(() => {
    for (const client of clients) client.ping();
  }, HEARTBEAT_MS);
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const client of clients) if (client.sweep(now)) clients.delete(client);
  }, SWEEP_MS);
  heartbeat.unref();
  sweep.unref();

  return {
    connect(req, res) {
      res.writeHead(200, {
        ...headers,
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-store',
        Connection: 'keep-alive',
      });
      const client = createSseClient(res, [
        ['retry', RETRY],
        ...kinds.map((kind): [string, Buffer] => [kind, current(kind).event]),
      ]);
      clients.add(client);
      req.on('close', () => clients.delete(client));
    },
    refresh() {
      for (const kind of kinds) {
        const json = read(kind);
        if (json === last.get(kind)?.json) continue;
        const { event } = remember(kind, json);
        for (const client of clients) client.send(kind, event);
      }
    },
    aliveSignature: () => running.map(({ pid, start }) => (isAlive(pid, start) ? pid : `-${pid}`)).join(','),
    close() {
      clearInterval(heartbeat);
      clearInterval(sweep);
      for (const client of clients) client.end();
      clients.clear();
    },
  };
}

/** Tells EventSource to reconnect a second after the stream ends, which is also how a dropped client comes back. */
const RETRY = Buffer.from('retry: 1000\n\n');

interface RunnerProcess {
  pid: number;
  /** When the runner started, as its state.json recorded it (undefined: older runners, no /proc). */
  start?: number;
}

/**
 * The runners of the loops shown alive, with their recorded start, so a runner killed with -9 whose pid the OS
 * handed to another process turns "dead" on the page too. The page's loop records leave the start out; it is
 * read from state.json for these few loops only, when the loops are re-read, never on the poll itself.
 */
function readRunnerProcesses(paths: ViewPaths, snapshot: LoopsSnapshot): RunnerProcess[] {
  return snapshot.loops
    .filter((l) => l.alive && l.pid !== null)
    .map((l) => {
      const state = readState(paths.cwd, l.id);
      return {
        pid: l.pid!,
        start: state?.pid === l.pid && typeof state.pidStart === 'number' ? state.pidStart : undefined,
      };
    });
}

/** JSON.stringify never emits a raw newline, so one data line carries the whole value. */
export function renderEvent(kind: EventKind, json: string): string {
  return `event: ${kind}\ndata: ${json}\n\n`;
}
