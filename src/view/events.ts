// Server-sent events: each open page gets the current plan, progress log and loops on connect,
// then whichever of them changed after every change on disk. Each event is encoded once and the same
// bytes go to every client; how much a client that stops reading may hold is src/view/sse-client.ts.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readLoopsSnapshot, readProgressSnapshot, type LoopsSnapshot, type ViewPaths } from './snapshot.js';
import { readPrdBody } from './prd-body.js';
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

/** A JSON body: text, or its UTF-8 bytes in chunks (the plan's, view/prd-body.ts `readPrdBody`). */
export type Body = string | readonly Buffer[];

interface Latest {
  body: Body;
  /** The event as sent, shared by every client's queue; made when a client first needs it. */
  event: Buffer | null;
}

/**
 * `prdBody`: the plan's body as /api/prd serves it (view/memo.ts), so the hub and the endpoint make it once per
 * change between them; default, read each time.
 */
export function createEventHub(
  paths: ViewPaths,
  headers: Record<string, string>,
  prdBody: () => Body = () => readPrdBody(paths),
): EventHub {
  const clients = new Set<SseClient>();
  const readers: Record<EventKind, () => Body> = {
    prd: prdBody,
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

  const read = (kind: EventKind): Body => readers[kind]();
  const remember = (kind: EventKind, body: Body): Latest => {
    const latest = { body, event: null };
    last.set(kind, latest);
    return latest;
  };
  // Rendered once per change and only when a page is there to get it: with none open, a change costs no event.
  const eventOf = (kind: EventKind, latest: Latest): Buffer => (latest.event ??= renderEvent(kind, latest.body));
  const current = (kind: EventKind): Buffer => {
    const latest = last.get(kind) ?? remember(kind, read(kind));
    return eventOf(kind, latest);
  };
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
        ...kinds.map((kind): [string, Buffer] => [kind, current(kind)]),
      ]);
      clients.add(client);
      req.on('close', () => clients.delete(client));
    },
    refresh() {
      for (const kind of kinds) {
        let body: Body;
        try {
          body = read(kind);
        } catch {
          continue; // what the agent wrote cannot be read now: the next change is told again (the request answers 500)
        }
        const before = last.get(kind)?.body;
        if (before !== undefined && sameBody(body, before)) continue;
        const latest = remember(kind, body);
        if (clients.size === 0) continue;
        const event = eventOf(kind, latest);
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

function sameBody(a: Body, b: Body): boolean {
  if (typeof a === 'string' || typeof b === 'string') return a === b;
  if (a === b) return true;
  const size = (chunks: readonly Buffer[]) => chunks.reduce((n, chunk) => n + chunk.length, 0);
  if (size(a) !== size(b)) return false;
  // Chunk by chunk when they are cut alike (a plan's bodies are: head, plan, cards), else as wholes.
  if (a.length === b.length && a.every((chunk, i) => chunk.length === b[i].length))
    return a.every((chunk, i) => chunk === b[i] || chunk.equals(b[i]));
  return Buffer.concat(a).equals(Buffer.concat(b));
}

/**
 * The event's bytes, its value on one data line: JSON.stringify never emits a raw line end, and in the plan's own text
 * (spliced into the prd body as read) each one is whitespace, since a JSON string cannot hold one raw; it turns into a
 * space, the same JSON value.
 */
export function renderEvent(kind: EventKind, body: Body): Buffer {
  const chunks = typeof body === 'string' ? [Buffer.from(body)] : body;
  return Buffer.concat([Buffer.from(`event: ${kind}\ndata: `), ...chunks.map(oneLine), EVENT_END]);
}

const EVENT_END = Buffer.from('\n\n');

/** `bytes` with each CR and LF a space (a copy; the bytes themselves when there is none). UTF-8 has these bytes only as themselves. */
export function oneLine(bytes: Buffer): Buffer {
  const lf = bytes.indexOf(0x0a);
  const cr = bytes.indexOf(0x0d);
  if (lf < 0 && cr < 0) return bytes;
  const out = Buffer.from(bytes);
  for (let i = lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr); i < out.length; i++) {
    const b = out[i];
    if (b === 0x0a || b === 0x0d) out[i] = 0x20;
  }
  return out;
}
