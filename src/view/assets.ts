// The page's files. The server serves exactly the names in PAGE_ASSETS, from memory, so no
// request path ever reaches the file system (nothing to traverse).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export interface Asset {
  body: Buffer;
  type: string;
}

/** URL path → file in the page folder. */
export const PAGE_ASSETS: Readonly<Record<string, string>> = {
  '/': 'index.html',
  '/index.html': 'index.html',
  '/app.js': 'app.js',
  '/dom.js': 'dom.js',
  '/board.js': 'board.js',
  '/detail.js': 'detail.js',
  '/side.js': 'side.js',
  '/workers.js': 'workers.js',
  '/style.css': 'style.css',
  '/favicon.svg': 'favicon.svg',
};

const TYPES: Readonly<Record<string, string>> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
};

/**
 * The page folder sits beside this module: src/view/page/ under vitest, dist/page/ once bundled
 * into dist/cli.js (scripts/build.mjs copies it there).
 */
export function resolvePageDir(): string {
  return fileURLToPath(new URL('./page/', import.meta.url));
}

export function readAssets(pageDir = resolvePageDir()): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const [urlPath, file] of Object.entries(PAGE_ASSETS)) {
    const body = readFileSync(path.join(pageDir, file));
    assets.set(urlPath, { body, type: TYPES[file.split('.').pop()!] ?? 'application/octet-stream' });
  }
  return assets;
}
