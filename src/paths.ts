import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { existsSync } from 'node:fs';

/**
 * The package root (the folder holding package.json, templates/, skills/ and dist/).
 * Works from src/ under vitest and from dist/cli.js once built.
 */
export function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'templates'))) return dir;
    dir = path.dirname(dir);
  }
  throw new Error('ralphkit: cannot find the package root (package.json beside templates/)');
}
