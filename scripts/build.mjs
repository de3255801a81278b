// Builds dist/cli.js with its chunks dist/cli-*.js (the CLI, with its libraries bundled so npx fetches
// one package; each command's code is a chunk loaded when that command runs), dist/install.js (`install` alone,
// in one file: see buildCli) and dist/ralph.mjs (the loop
// engine installed into repositories: ralphkit's own code and Node built-ins only, checked below).
//
// RALPHKIT_ENGINE_ENTRY=<file> (for tests) builds that file as the engine, runs the guard on it and
// stops: exit 1 if the guard refuses it, 0 otherwise; nothing in dist/ is touched either way.
import { build } from 'esbuild';
import { cp, rm, mkdir } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { engineGuardMessage } from './engine-guard.mjs';
import { CHUNK_PREFIX, publish } from './dist-publish.mjs';

const root = new URL('..', import.meta.url);
const rootDir = fileURLToPath(root);
// Build into a private folder, then move the outputs into dist/ (scripts/dist-publish.mjs).
const finalDist = new URL('dist/', root);
const dist = new URL(`dist/.build-${process.pid}/`, root);
const testEngine = process.env.RALPHKIT_ENGINE_ENTRY;

// Paths in the metafile (and in the bundles' comments) are relative to the repository, wherever the build runs from.
const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'warning',
  absWorkingDir: rootDir,
};
// CommonJS libraries bundled into an ES module still call require(): built-ins only. A bundled library
// that tries an optional package at run time (js-yaml tries esprima) gets "not found", as it would in
// the published package, which ships no node_modules; in a checkout it would otherwise load from there.
const requireShim =
  "import { createRequire as __rkCreateRequire, isBuiltin as __rkIsBuiltin } from 'node:module'; " +
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the shim's source text, whose own template literal runs in the bundle
  "const require = (id) => { if (!__rkIsBuiltin(id)) throw Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' }); " +
  'return __rkCreateRequire(import.meta.url)(id); };';

/** The build is refused: the message says why. */
class GuardError extends Error {}

try {
  await mkdir(dist, { recursive: true });
  await buildEngine(testEngine ?? 'src/engine/main.ts');
  if (testEngine) {
    process.stderr.write(`build: ${testEngine} passes the engine guard (test build, nothing written)\n`);
  } else {
    const checkedSkills = JSON.stringify(await checkShippedSkills());
    const chunks = [...(await buildCli('cli', 'src/cli.ts', checkedSkills))];
    for (const chunk of await buildCli('install', 'src/cli-install.ts', checkedSkills))
      if (!chunks.includes(chunk)) chunks.push(chunk);
    await cp(new URL('src/view/page/', root), new URL('page/', dist), { recursive: true }).catch((e) => {
      if (e.code !== 'ENOENT') throw e;
    });
    await publish(fileURLToPath(dist), fileURLToPath(finalDist), chunks);
  }
} catch (err) {
  if (!(err instanceof GuardError)) throw err;
  process.stderr.write(`build refused: ${err.message}\n`);
  process.exitCode = 1;
} finally {
  await rm(dist, { recursive: true, force: true });
}

async function buildEngine(entry) {
  const result = await build({
    ...common,
    entryPoints: [entry],
    outfile: new URL('ralph.mjs', dist).pathname,
    banner: {
      js: "#!/usr/bin/env node\n// ralph.mjs: the ralphkit loop engine. Generated from ralphkit's src/ at build time; do not edit.",
    },
    external: [...builtinModules, ...builtinModules.map((m) => `node:${m}`)],
    metafile: true,
  });
  const entryInput = Object.entries(result.metafile.outputs)
    .map(([, o]) => o.entryPoint)
    .find(Boolean);
  const refusal = engineGuardMessage(result.metafile, { entryPoints: [entryInput] });
  if (refusal) throw new GuardError(refusal);
}

/**
 * ralphkit's own skills run through install's skill check now, by the code the CLI is built from
 * (src/install/sources.ts), so that install need not parse their YAML again each time.
 */
async function checkShippedSkills() {
  const result = await build({
    ...common,
    stdin: {
      contents: "export { checkShippedSkills } from './src/install/sources.ts';",
      resolveDir: rootDir,
      loader: 'ts',
    },
    outfile: new URL('check-skills.mjs', dist).pathname,
    banner: { js: requireShim },
  });
  if (result.errors.length) throw new Error('cannot build the skill check');
  const { checkShippedSkills: check } = await import(pathToFileURL(new URL('check-skills.mjs', dist).pathname).href);
  await rm(new URL('check-skills.mjs', dist));
  return check(fileURLToPath(new URL('skills/', root)));
}

/**
 * One entry of the CLI and its chunks, dist/cli-<name>-<hash>.js; returns the chunk file names. Two entries, each
 * built on its own: dist/cli.js (every command) and dist/install.js (`install` alone, src/cli-install.ts). Built
 * together they would share their code through many small chunks, which install, loading one file, is spared; a
 * process loads one entry and its own chunks only (the same name in both builds is the same content). The chunks
 * sit beside the entries, not in a folder of their own, because code that finds its files from its own
 * location (the dashboard's page/, src/view/assets.ts) must find them in dist/ whichever chunk it is in.
 */
async function buildCli(name, entry, checkedSkills) {
  const result = await build({
    ...common,
    entryPoints: { [name]: entry },
    outdir: dist.pathname,
    splitting: true,
    chunkNames: `${CHUNK_PREFIX}[name]-[hash]`,
    banner: { js: requireShim },
    define: { __RALPHKIT_CHECKED_SKILLS__: checkedSkills },
    metafile: true,
  });
  return Object.keys(result.metafile.outputs)
    .map((out) => out.slice(out.lastIndexOf('/') + 1))
    .filter((name) => name.startsWith(CHUNK_PREFIX));
}
