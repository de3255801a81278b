// `ralphkit view` with event-stream clients that never read, while ralph/progress.txt grows by 1 MiB forty
// times: the server's memory stays bounded, a reading client still follows, and a client dropped for
// falling behind gets the whole current state when it reconnects. RSS is read from /proc, so Linux only.
import { appendFileSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { testdir } from '../support/repo.js';
import { HAS_PROC, until } from '../support/process.js';
import { plan, writePlan, writeProgress } from '../support/view-fixtures.js';
import { openEvents, type SseEvent } from '../support/view-http.js';
import { startView } from '../support/view-cli.js';
import { SSE_LIMITS } from '../../src/view/sse-client.js';

const MIB = 1024 * 1024;
const SLOW_CLIENTS = 20;
const STEPS = 40;
const mib = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`;

/** Resident memory of a process in bytes (VmRSS is in kB). */
function rss(pid: number): number {
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
}

/** Open sockets of a process: the listener plus one per connection. */
function socketCount(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:');
    } catch {
      return false; // closed while listed
    }
  }).length;
}

/** One section of about 1 MiB, titled `step <n>`, the way an agent appends to the log. */
function entry(n: number): string {
  const line = `- note ${n}: ${'x'.repeat(90)}\n`;
  return `## 2026-12-01 10:${String(n).padStart(2, '0')} - step ${n}\n${line.repeat(Math.ceil(MIB / line.length))}`;
}

/** The step whose note a progress event ends with (an entry is bigger than what is sent of the log's end). */
const lastStep = (e: SseEvent): number | undefined => {
  const items = e.data.log?.sections?.at(-1)?.blocks?.at(-1)?.items;
  return Number(/^note (\d+):/.exec(items?.at(-1)?.text ?? '')?.[1]) || undefined;
};

/** Connects to /api/events, sends the request, then never reads: its receive window fills and stays full. */
function stalledClient(url: string): Promise<net.Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port) }, () => {
      socket.pause();
      socket.write(`GET /api/events HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAccept: text/event-stream\r\n\r\n`, () =>
        resolve(socket),
      );
    });
    socket.on('error', reject);
    onTestFinished(() => void socket.destroy());
  });
}

/** Everything a paused socket was sent, read once it resumes, up to the server's close. */
function readToEnd(socket: net.Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    socket.on('close', () => resolve(text));
    socket.resume();
  });
}

describe.runIf(HAS_PROC)('ralphkit view with clients that stop reading', () => {
  it('keeps its memory bounded, still updates a reading client, and a dropped client gets the full state back', async () => {
    const repo = testdir();
    writePlan(repo, plan(4));
    writeProgress(repo, '# Progress log\n\n## Codebase Patterns\n- run npm test\n\n## Sessions\n');
    // Two dashboards of the same repository, side by side: one with the stalled clients, one without.
    const view = await startView(['--cwd', repo]);
    const control = await startView(['--cwd', repo]);
    const pid = view.child.pid!;
    const reader = await openEvents(view.url);
    const controlReader = await openEvents(control.url);
    onTestFinished(() => (reader.close(), controlReader.close()));
    await Promise.all([reader, controlReader].map((r) => r.waitFor((e) => e.event === 'progress')));
    const baseline = rss(pid);
    const sockets = socketCount(pid);

    const slow = await Promise.all(Array.from({ length: SLOW_CLIENTS }, () => stalledClient(view.url)));
    await until('the slow clients to be accepted', () => socketCount(pid) === sockets + SLOW_CLIENTS);
    const peak = { stalled: baseline, control: rss(control.child.pid!) };
    let sent = 0; // bytes of the updates the reading client got: what each stalled client would be queued
    for (let n = 1; n <= STEPS; n++) {
      for (const r of [reader, controlReader]) r.events.length = 0; // the test must not hold 40 copies either
      appendFileSync(path.join(repo, 'ralph/progress.txt'), entry(n));
      const [update] = await Promise.all(
        [reader, controlReader].map((r) => r.waitFor((e) => e.event === 'progress' && lastStep(e) === n, 60_000)),
      );
      sent += JSON.stringify(update.data).length;
      peak.stalled = Math.max(peak.stalled, rss(pid));
      peak.control = Math.max(peak.control, rss(control.child.pid!));
    }
    const extra = peak.stalled - peak.control;
    console.log(
      `view RSS: baseline ${mib(baseline)}, peak ${mib(peak.stalled)} with ${SLOW_CLIENTS} stalled clients, ${mib(peak.control)} without; ${STEPS} MiB appended, ${mib(sent)} sent to a reading client`,
    );
    // Each stalled client may hold at most its cap, so all of them together stay under that many caps; and what
    // they cost over the dashboard without them is a sliver of what queuing every update for each would take.
    expect(peak.stalled - baseline).toBeLessThan(SLOW_CLIENTS * SSE_LIMITS.maxHeldBytes);
    expect(extra).toBeLessThan((SLOW_CLIENTS * sent) / 10);

    // Stalled clients are dropped (their sockets close on the server), the reading one stays.
    await until('the stalled clients to be dropped', () => socketCount(pid) === sockets, SSE_LIMITS.stallMs * 4);
    const received = await Promise.all(slow.map(readToEnd));
    for (const text of received) {
      // What a stalled client got before the drop: a few updates at most, never one per change.
      expect(text.split('event: progress\n').length - 1).toBeLessThan(STEPS / 2);
    }

    // Reconnecting, as EventSource does by itself, brings the whole current state at once.
    const again = await openEvents(view.url);
    onTestFinished(() => again.close());
    const progress = await again.waitFor((e) => e.event === 'progress');
    expect(lastStep(progress)).toBe(STEPS);
    expect(progress.data.log.patterns.title).toBe('Codebase Patterns');
    expect((await again.waitFor((e) => e.event === 'prd')).data.summary.total).toBe(4);
    expect((await again.waitFor((e) => e.event === 'loops')).data.loops).toEqual([]);
  }, 180_000);
});
