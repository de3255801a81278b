// Builds dist/cli.js (the CLI, with its libraries bundled so npx fetches one package)
// and dist/ralph.mjs (the loop engine installed into repositories: Node built-ins only).
import { build } from 'esbuild';
import { cp, rm, readFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';

const root = new URL('..', import.meta.url);
const dist = new URL('dist/', root);
await rm(dist, { recursive: true, force: true });

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
