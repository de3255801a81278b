// Reading a file that may be missing: null instead of an error. Node built-ins only (the engine uses it).
import { readFileSync } from 'node:fs';

/** The file's text, or null when it cannot be read (missing, a folder, no permission). */
export function readTextOrNull(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** The file's bytes, or null when it cannot be read. */
export function readBytesOrNull(file: string): Buffer | null {
  try {
    return readFileSync(file);
  } catch {
    return null;
  }
}
