// Writes docs/options.md from the runner's own sources (src/engine/cli/options-doc.ts renders it). esbuild turns
// that TypeScript into one temporary module, so no build of dist/ is needed. Run as `npm run docs:options`;
// test/unit/engine/cli/options-doc.test.ts fails when the committed file differs from what this writes.
import { build } from 'esbuild';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const rootDir = fileURLToPath(new URL('..', import.meta.url));
const target = path.join(rootDir, 'docs/options.md');
const temp = await mkdtemp(path.join(tmpdir(), 'ralphkit-options-doc-'));
try {
  const module = path.join(temp, 'options-doc.mjs');
  await build({ entryPoints: ['src/engine/cli/options-doc.ts'], outfile: module, bundle: true, platform: 'node', format: 'esm', target: 'node20', logLevel: 'warning', absWorkingDir: rootDir });
  const { renderOptionsDoc } = await import(pathToFileURL(module).href);
  await writeFile(target, renderOptionsDoc());
  process.stdout.write(`wrote ${path.relative(process.cwd(), target) || target}\n`);
} finally {
  await rm(temp, { recursive: true, force: true });
}
