// One event stream to a client that does not read: updates coalesce per kind while its queue waits, and it is
// closed when it holds more than its cap or stops moving. Real sockets on loopback; the first event is bigger than
// the kernel's buffers can take (net.ipv4.tcp_wmem caps a send buffer at 4 MiB by default), so the client is behind.
import { createServer, type ServerResponse } from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createSseClient, type SseClient, type SseLimits } from '../../../src/view/sse-client.js';

const MIB = 1024 * 1024;
const BIG = Buffer.from(`event: big\ndata: "${'x'.repeat(16 * MIB)}"\n\n`);
const event = (kind: string, value: string) => Buffer.from(`event: ${kind}\ndata: "${value}"\n\n`);

/** A server whose one stream starts with BIG, and a raw client that sends the request and does not read. */
async function stalledStream(
  limits: SseLimits,
): Promise<{ client: SseClient; res: ServerResponse; socket: net.Socket }> {
  let opened: (v: { client: SseClient; res: ServerResponse }) => void;
  const ready = new Promise<{ client: SseClient; res: ServerResponse }>((r) => (opened = r));
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    opened({ client: createSseClient(res, [['big', BIG]], limits), res });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onTestFinished(() => void (server.closeAllConnections(), server.close()));
  const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
  socket.pause();
  socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  onTestFinished(() => void socket.destroy());
  return { ...(await ready), socket };
}

/** What the socket was sent after BIG (latin1, so byte for character), once `done` says it has it all or the stream closes. */
function readUntil(socket: net.Socket, done: (text: string) => boolean): Promise<string> {
  return new Promise((resolve) => {
    let seen = 0;
    let after = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      // BIG itself is only counted: 16 MiB of string concatenation and searching would be the slowest part.
      const skip = Math.max(0, Math.min(d.length, BIG.length - seen));
      seen += d.length;
      after += d.slice(skip);
      if (done(after)) resolve(after);
    });
    socket.on('close', () => resolve(after));
    socket.resume();
  });
}

describe('an event stream whose client does not read', () => {
  it('keeps only the newest update of each kind until the client drains, then sends those', async () => {
    const { client, res, socket } = await stalledStream({ maxHeldBytes: 64 * MIB, stallMs: 60_000 });
    expect(res.writableLength).toBeGreaterThan(4 * MIB);
    for (let v = 1; v <= 5; v++) client.send('plan', event('plan', `plan v${v}`));
    client.send('loops', event('loops', 'loops v1'));
    const text = await readUntil(socket, (t) => t.includes('loops v1'));
    expect(text.match(/plan v\d/g)).toEqual(['plan v5']);
    expect(text.indexOf('plan v5')).toBeLessThan(text.indexOf('loops v1'));
    expect(res.destroyed).toBe(false);
  });

  it('is closed when the next update comes while it holds more than its cap', async () => {
    const { client, res, socket } = await stalledStream({ maxHeldBytes: MIB, stallMs: 60_000 });
    expect(res.writableLength).toBeGreaterThan(MIB);
    client.send('plan', event('plan', 'plan v1'));
    expect(res.destroyed).toBe(true);
    expect(await readUntil(socket, () => false)).not.toContain('plan v1');
  });

  it('is closed by a sweep once its queue has not moved for the stall time, not before', async () => {
    // The stream fell behind somewhere between these two readings of the clock, however slow the set-up was.
    const before = Date.now();
    const { client, res } = await stalledStream({ maxHeldBytes: 64 * MIB, stallMs: 10_000 });
    const after = Date.now();
    expect(client.sweep(before + 5_000)).toBe(false);
    expect(client.sweep(after + 10_001)).toBe(true);
    expect(res.destroyed).toBe(true);
  });
});
