// Writes docs/options.md from ralphkit's own sources (src/options-doc.ts renders it). esbuild turns that
// TypeScript into one temporary module under node_modules/.cache (its libraries stay imports, found in
// node_modules), so no build of dist/ is needed. Run as `npm run docs:options`;
// test/unit/options-doc.test.ts fails when the committed file differs from what this writes.
import { build } from 'esbuild';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const rootDir = fileURLToPath(new URL('..', import.meta.url));
const target = path.join(rootDir, 'docs/options.md');
const cache = path.join(rootDir, 'node_modules/.cache');
await mkdir(cache, { recursive: true });
const temp = await mkdtemp(path.join(cache, 'ralphkit-options-doc-'));
try {
  const module = path.join(temp, 'options-doc.mjs');
  await build({
    entryPoints: ['src/options-doc.ts'],
    outfile: module,
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    target: 'node20',
    logLevel: 'warning',
    absWorkingDir: rootDir,
  });
  process.env.RALPHKIT_NO_AUTORUN = '1'; // src/cli.ts runs the CLI when loaded unless told not to
  const { renderOptionsDoc } = await import(pathToFileURL(module).href);
  await writeFile(target, renderOptionsDoc());
  process.stdout.write(`wrote ${path.relative(process.cwd(), target) || target}\n`);
} finally {
  await rm(temp, { recursive: true, force: true });
}
