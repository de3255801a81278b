// Atomic file writes with Node built-ins only, so the engine (ralph.mjs) can use them too:
// write a temp file in the same folder, fsync it, then rename over the target.
import { openSync, writeSync, fsyncSync, closeSync, renameSync, unlinkSync, chmodSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

export function atomicWriteFileSync(file: string, data: string | Uint8Array, mode?: number): void {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    writeNewFileSync(tmp, data, mode);
    renameSync(tmp, file);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      /* never created or already renamed */
    }
    throw err;
  }
}

/** Create `file` (it must not exist), write all of `data` and fsync it: once this returns, the bytes are on disk. */
export function writeNewFileSync(file: string, data: string | Uint8Array, mode?: number): void {
  const fd = openSync(file, 'wx', mode ?? 0o644);
  try {
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  // The umask narrows the mode open() gives; an explicit mode (ralph.sh's 0755) must hold as asked.
  if (mode !== undefined) chmodSync(file, mode);
}
