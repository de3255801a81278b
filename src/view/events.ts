// Server-sent events: each open page gets the current plan, progress log and loops on connect,
// then whichever of them changed after every change on disk.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readLoopsSnapshot, readPrdSnapshot, readProgressSnapshot, type LoopsSnapshot, type ViewPaths } from './snapshot.js';
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

export function createEventHub(paths: ViewPaths, headers: Record<string, string>): EventHub {
  const clients = new Set<ServerResponse>();
  const readers: Record<EventKind, () => unknown> = {
    prd: () => readPrdSnapshot(paths),
    progress: () => readProgressSnapshot(paths),
    loops: () => readLoopsSnapshot(paths),
  };
  const last = new Map<EventKind, string>();
  let running: RunnerProcess[] = [];

  const read = (kind: EventKind): string => {
    const value = readers[kind]();
    if (kind === 'loops') running = readRunnerProcesses(paths, value as LoopsSnapshot);
    return JSON.stringify(value);
  };
  const current = (kind: EventKind): string => last.get(kind) ?? remember(kind, read(kind));
  const remember = (kind: EventKind, json: string): string => (last.set(kind, json), json);
  const heartbeat = setInterval(() => {
    for (const res of clients) res.write(': ping\n\n');
  }, HEARTBEAT_MS);
  heartbeat.unref();

  return {
    connect(req, res) {
      res.writeHead(200, { ...headers, 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', Connection: 'keep-alive' });
      res.write('retry: 1000\n\n');
      for (const kind of Object.keys(readers) as EventKind[]) res.write(renderEvent(kind, current(kind)));
      clients.add(res);
      req.on('close', () => clients.delete(res));
    },
    refresh() {
      for (const kind of Object.keys(readers) as EventKind[]) {
        const json = read(kind);
        if (json === last.get(kind)) continue;
        remember(kind, json);
        for (const res of clients) res.write(renderEvent(kind, json));
      }
    },
    aliveSignature: () => running.map(({ pid, start }) => (isAlive(pid, start) ? pid : `-${pid}`)).join(','),
    close() {
      clearInterval(heartbeat);
      for (const res of clients) res.end();
      clients.clear();
    },
  };
}

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
  return snapshot.loops.filter((l) => l.alive && l.pid !== null).map((l) => {
    const state = readState(paths.cwd, l.id);
    return { pid: l.pid!, start: state?.pid === l.pid && typeof state.pidStart === 'number' ? state.pidStart : undefined };
  });
}

/** JSON.stringify never emits a raw newline, so one data line carries the whole value. */
export function renderEvent(kind: EventKind, json: string): string {
  return `event: ${kind}\ndata: ${json}\n\n`;
}
