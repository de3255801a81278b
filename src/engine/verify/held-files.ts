// Checks run the agent's code, and code can reach past its checkout: the verification checkout borrows the real
// repository's objects (its alternates file names them), so a test that imports a module can find ralph/prd.json and
// rewrite it, or start a process that does, which the runner then stops halfway through a write. Whatever a check
// leaves in the runner's own files is not the runner's: they are read before the first check and put back, bytes and
// mode, when the checks are over (after the processes they left are stopped). The runner's own writes come after.
import { readFileSync, realpathSync, statSync, unlinkSync } from 'node:fs';
import { atomicWriteFileSync } from '../../util/atomic.js';

/** A file as it was before the checks: its bytes and mode, or null when there was none. */
type Held = { bytes: Buffer; mode: number } | null;

export class HeldFiles {
  private readonly held = new Map<string, Held>();

  /** Reads each file now (once: a second call keeps the first reading). An unreadable file is not held. */
  hold(files: readonly string[]): void {
    for (const given of files) {
      // A symlinked plan is held (and put back) at its target, so the link stays a link.
      const file = resolveTarget(given);
      if (this.held.has(file)) continue;
      const now = readHeld(file);
      if (now !== undefined) this.held.set(file, now);
    }
  }

  /**
   * Puts back every held file whose bytes (or presence) changed since `hold`, and returns the changed ones. A write
   * that fails throws from `write`'s caller (the runner's guardWrite): a plan it cannot restore must stop the loop.
   */
  restore(write: (file: string, put: () => void) => void = (_file, put) => put()): string[] {
    const changed: string[] = [];
    for (const [file, before] of this.held) {
      const now = readHeld(file);
      if (sameHeld(before, now)) continue;
      changed.push(file);
      write(file, () => {
        if (before === null) unlinkSync(file);
        else atomicWriteFileSync(file, before.bytes, before.mode);
      });
    }
    this.held.clear();
    return changed;
  }
}

function resolveTarget(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

/** The file's bytes and permission bits; null when it does not exist; undefined when it cannot be read. */
function readHeld(file: string): Held | undefined {
  try {
    const mode = statSync(file).mode & 0o7777;
    return { bytes: readFileSync(file), mode };
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? null : undefined;
  }
}

function sameHeld(before: Held, now: Held | undefined): boolean {
  if (before === null || now === null || now === undefined) return before === now;
  return before.mode === now.mode && before.bytes.equals(now.bytes);
}
