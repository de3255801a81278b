// Reading a file that may be missing: null instead of an error. Node built-ins only (the engine uses it).
import { readFileSync, realpathSync } from 'node:fs';

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

/** The path with every symlink resolved, or undefined when it does not resolve (missing, a loop, no permission). */
export function realpathOrUndefined(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}
