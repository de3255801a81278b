// Builds dist/cli.js (the CLI, with its libraries bundled so npx fetches one package)
// and dist/ralph.mjs (the loop engine installed into repositories: Node built-ins only).
import { build } from 'esbuild';
import { cp, rm, readFile, rename, mkdir } from 'node:fs/promises';
import { builtinModules } from 'node:module';

const root = new URL('..', import.meta.url);
// Build into a private folder, then rename each output into dist/, so a test that is reading
// dist/ while another build runs never sees a half-written file.
const finalDist = new URL('dist/', root);
const dist = new URL(`dist/.build-${process.pid}/`, root);
await mkdir(dist, { recursive: true });

const common = { bundle: true, platform: 'node', format: 'esm', target: 'node20', logLevel: 'warning' };
// CommonJS libraries bundled into an ES module still call require() for built-ins.
const requireShim = "import { createRequire as __rkCreateRequire } from 'node:module'; const require = __rkCreateRequire(import.meta.url);";

await build({ ...common, entryPoints: [new URL('src/cli.ts', root).pathname], outfile: new URL('cli.js', dist).pathname, banner: { js: requireShim } });
await build({
  ...common,
  entryPoints: [new URL('src/engine/main.ts', root).pathname],
  outfile: new URL('ralph.mjs', dist).pathname,
  banner: { js: '#!/usr/bin/env node\n// ralph.mjs: the ralphkit loop engine. Generated from ralphkit\'s src/ at build time; do not edit.' },
  external: [...builtinModules, ...builtinModules.map((m) => `node:${m}`)],
});

// The engine must stay self-contained: refuse a build that imports anything but Node built-ins.
const engine = await readFile(new URL('ralph.mjs', dist), 'utf8');
const imports = [...engine.matchAll(/^import .* from ["']([^"']+)["']/gm)].map((m) => m[1]);
const foreign = imports.filter((s) => !s.startsWith('node:') && !builtinModules.includes(s));
if (foreign.length) throw new Error(`dist/ralph.mjs imports non-built-in modules: ${foreign.join(', ')}`);

await cp(new URL('src/view/page/', root), new URL('page/', dist), { recursive: true }).catch((e) => {
  if (e.code !== 'ENOENT') throw e;
});

for (const name of ['cli.js', 'ralph.mjs', 'page']) {
  const from = new URL(name, dist);
  const to = new URL(name, finalDist);
  if (name === 'page') await rm(to, { recursive: true, force: true });
  await rename(from, to).catch((e) => {
    if (e.code !== 'ENOENT') throw e;
  });
}
await rm(dist, { recursive: true, force: true });
