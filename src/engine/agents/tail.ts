// Bounded views of an agent's output stream, so the runner's memory does not grow with what the agent prints:
// the last N bytes of a stream, and its lines one by one with an upper bound on a line's length. Both take
// linear time in the length of the stream (no re-copying of what was kept on every chunk).
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/**
 * The last `max` bytes of a text stream, in one buffer allocated once and written round (a ring). Holding on to the
 * stream's own chunks instead would move each of them into the old generation of the garbage collector, where tens
 * of MB of dropped chunks pile up before a full collection frees them.
 */
export class TextTail {
  private ring: Buffer | null = null;
  private pos = 0;
  private total = 0;
  constructor(readonly max: number) {}

  /** True once text was dropped from the front: what is kept is not the whole stream. */
  get cut(): boolean {
    return this.total > this.max;
  }

  push(text: string): void {
    const ring = (this.ring ??= Buffer.allocUnsafe(this.max));
    const bytes = Buffer.byteLength(text);
    this.total += bytes;
    if (this.pos + bytes <= this.max) {
      this.pos += ring.write(text, this.pos);
    } else {
      // Wraps (once per `max` bytes): encode once and copy the end of the ring, then its start.
      const buf = Buffer.from(text);
      const from = Math.max(0, buf.length - this.max);
      const first = Math.min(this.max - this.pos, buf.length - from);
      buf.copy(ring, this.pos, from, from + first);
      const rest = buf.copy(ring, 0, from + first);
      this.pos = rest > 0 ? rest : this.pos + first;
    }
    if (this.pos === this.max) this.pos = 0;
  }

  text(): string {
    if (!this.ring) return '';
    if (!this.cut) return this.ring.toString('utf8', 0, this.total);
    const bytes = Buffer.concat([this.ring.subarray(this.pos), this.ring.subarray(0, this.pos)]);
    // The cut may have split a character: its continuation bytes (10xxxxxx) are dropped, not shown as U+FFFD.
    let start = 0;
    while (start < 4 && start < bytes.length && (bytes[start] & 0xc0) === 0x80) start++;
    return bytes.toString('utf8', start);
  }
}

/** Keeps the last `max` characters of `text`. */
export function keepTail(text: string, max: number): string {
  return text.length > max ? text.slice(text.length - max) : text;
}

/**
 * Splits a stream into lines as chunks arrive. A line longer than `max` is not assembled: it is skipped up to its
 * newline and counted in `skipped` (the raw text is still in the iteration log), so one endless line cannot hold
 * the runner's memory.
 */
export class LineSplitter {
  private parts: string[] = [];
  private size = 0;
  private skipping = false;
  skipped = 0;
  constructor(
    private readonly max: number,
    private readonly onLine: (line: string) => void,
  ) {}

  push(chunk: string): void {
    let start = 0;
    for (let nl = chunk.indexOf('\n'); nl >= 0; nl = chunk.indexOf('\n', start)) {
      this.add(chunk.slice(start, nl));
      this.flush();
      start = nl + 1;
    }
    this.add(chunk.slice(start));
  }

  /** The last line, when the stream did not end with a newline. */
  end(): void {
    if (this.size > 0 || this.skipping) this.flush();
  }

  private add(piece: string): void {
    if (this.skipping || piece === '') return;
    if (this.size + piece.length > this.max) {
      this.skipping = true;
      this.parts = [];
      this.size = 0;
      return;
    }
    this.parts.push(piece);
    this.size += piece.length;
  }

  private flush(): void {
    if (this.skipping) this.skipped++;
    else this.onLine(this.parts.length === 1 ? this.parts[0] : this.parts.join(''));
    this.parts = [];
    this.size = 0;
    this.skipping = false;
  }
}

/** How much of an agent's output the runner holds (docs/agents.md, "Long output"); the iteration log has all of it. */
export const OUTPUT_LIMITS = {
  /** Bytes: the tail of stdout, plain output's final message and the failure report. */
  stdout: 1024 * 1024,
  /** Bytes: the tail of stderr, for the failure report, rate-limit and transient-error detection. */
  stderr: 64 * 1024,
  /** Characters: the longest stream-json / JSONL line read (Claude Code's result event carries the final message). */
  line: 8 * 1024 * 1024,
  /** Characters (bytes for a last-message file): a final message's tail, where the completion tag is. */
  finalMessage: 1024 * 1024,
} as const;

/** The last `bytes` of a file as text (an agent's log or message file can be large), or null when it cannot be read. */
export function readFileTail(file: string, bytes: number): string | null {
  try {
    const fd = openSync(file, 'r');
    try {
      const size = fstatSync(fd).size;
      const buf = Buffer.alloc(Math.min(size, bytes));
      readSync(fd, buf, 0, buf.length, size - buf.length);
      return buf.toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
}
