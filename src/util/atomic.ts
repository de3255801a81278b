// Atomic file writes with Node built-ins only, so the engine (ralph.mjs) can use them too:
// write a temp file in the same folder, fsync it, then rename over the target.
import {
  fsync,
  fchmodSync,
  openSync,
  writeSync,
  fsyncSync,
  closeSync,
  renameSync,
  unlinkSync,
  chmodSync,
  constants,
  fstatSync,
  lstatSync,
  rmSync,
} from 'node:fs';
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
    writeAll(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  // The umask narrows the mode open() gives; an explicit mode (ralph.sh's 0755) must hold as asked.
  if (mode !== undefined) chmodSync(file, mode);
}

/**
 * writeNewFileSync for many files: each is created and written in turn (`afterEach(i)` runs after the i-th), then all
 * are fsynced at once and closed; once the promise resolves, every byte is on disk. The fsyncs run side by side on
 * libuv's threads, where the file system commits them together: one after another they cost a journal commit each
 * (an install's dozen small files took 20–45 ms that way on ext4, against about 10 ms together).
 */
export async function writeNewFilesSynced(
  files: readonly { file: string; data: string | Uint8Array; mode?: number }[],
  afterEach: (index: number) => Promise<void> = async () => {},
): Promise<void> {
  const fds: number[] = [];
  try {
    for (const [index, { file, data, mode }] of files.entries()) {
      const fd = openSync(file, 'wx', mode ?? 0o644);
      fds.push(fd);
      writeAll(fd, data);
      if (mode !== undefined) fchmodSync(fd, mode);
      await afterEach(index);
    }
    const synced = await Promise.allSettled(
      fds.map((fd) => new Promise<void>((resolve, reject) => fsync(fd, (err) => (err ? reject(err) : resolve())))),
    );
    const failed = synced.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
  } finally {
    for (const fd of fds) closeSync(fd);
  }
}

function writeAll(fd: number, data: string | Uint8Array): void {
  const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let off = 0;
  while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
}

/**
 * Appends `text` to `file`, a file of the runner's in a tree the agent can write (ralph/progress.txt): never through
 * a link or into anything but a regular file. What the agent put in its place (a link to a file outside, even one that
 * does not exist yet; a pipe, which would hold the write) is removed and a file of the runner's made there; a folder
 * there fails the write (EISDIR). The folders above it are held by the caller (errors.ts guardWrite).
 */
export function appendOwnFileSync(file: string, text: string): void {
  let st = null;
  try {
    st = lstatSync(file);
  } catch {
    /* not there: made below */
  }
  // A folder there is not removed (it may hold someone's files): the open below fails on it, and says so.
  if (st && !st.isFile() && !st.isDirectory()) rmSync(file, { force: true });
  const flags =
    constants.O_WRONLY |
    constants.O_APPEND |
    constants.O_CREAT |
    (constants.O_NOFOLLOW ?? 0) |
    (constants.O_NONBLOCK ?? 0);
  const fd = openSync(file, flags, 0o644);
  try {
    if (!fstatSync(fd).isFile()) throw Object.assign(new Error(`${file} is not a file`), { code: 'EINVAL' });
    const buf = Buffer.from(text, 'utf8');
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
  } finally {
    closeSync(fd);
  }
}
