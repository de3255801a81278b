// The engine (dist/ralph.mjs) may bundle only ralphkit's own code: the build reads esbuild's metafile and
// refuses an engine that pulls in an npm package. Proven here on real esbuild builds of temp entry files,
// and on scripts/build.mjs itself (RALPHKIT_ENGINE_ENTRY builds a test entry and writes nothing to dist/).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { foreignExternals, foreignInputs, engineGuardMessage } from '../../../scripts/engine-guard.mjs';
import { ROOT, run, testdir, writeFiles } from '../../support/repo.js';

const BUILD = path.join(ROOT, 'scripts/build.mjs');

/** A temp folder whose `node_modules` is this repository's, holding `files`; bare imports resolve as in src/. */
function entryDir(files: Record<string, string>): string {
  const dir = testdir('ralphkit-guard-');
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  writeFiles(dir, files);
  return dir;
}

/** The engine build's options (scripts/build.mjs), on another entry. */
async function metafileOf(entry: string) {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    absWorkingDir: ROOT,
    external: ['node:*'],
    write: false,
    outfile: path.join(path.dirname(entry), 'out.mjs'),
    metafile: true,
    logLevel: 'silent',
  });
  const entryInput = path.relative(ROOT, entry);
  return { metafile: result.metafile, entryInput };
}

const KLEUR_ENTRY = {
  'engine.mjs': "import { helper } from './helper.mjs';\nhelper();\n",
  'helper.mjs': "import kleur from 'kleur';\nexport function helper() { console.log(kleur.red('x')); }\n",
};
const BUILTINS_ENTRY = { 'engine.mjs': "import { readFileSync } from 'node:fs';\nconsole.log(readFileSync.name);\n" };

/** The built engine and CLI, which a test build must leave alone. (Not all of dist/: other tests may rebuild it, to the same bytes.) */
function distSnapshot(): Record<string, string> {
  return Object.fromEntries(
    ['ralph.mjs', 'cli.js'].map((name) => {
      const file = path.join(ROOT, 'dist', name);
      return [name, existsSync(file) ? createHash('sha256').update(readFileSync(file)).digest('hex') : 'missing'];
    }),
  );
}

describe('foreignInputs on an esbuild metafile', () => {
  it('names an npm package and the file that imported it', async () => {
    const dir = entryDir(KLEUR_ENTRY);
    const { metafile, entryInput } = await metafileOf(path.join(dir, 'engine.mjs'));
    const helper = path.relative(ROOT, path.join(dir, 'helper.mjs'));
    const found = foreignInputs(metafile, { entryPoints: [entryInput] });
    expect(found).toContainEqual({ input: 'node_modules/kleur/index.mjs', importers: [helper] });
    // The helper is outside src/ too, so it is named as well (imported by the entry).
    expect(found).toContainEqual({ input: helper, importers: [entryInput] });
    const message = engineGuardMessage(metafile, { entryPoints: [entryInput] });
    expect(message).toContain(`node_modules/kleur/index.mjs (imported by ${helper})`);
  });

  it('finds nothing in an engine that imports only Node built-ins', async () => {
    const dir = entryDir(BUILTINS_ENTRY);
    const { metafile, entryInput } = await metafileOf(path.join(dir, 'engine.mjs'));
    expect(foreignInputs(metafile, { entryPoints: [entryInput] })).toEqual([]);
    expect(foreignExternals(metafile)).toEqual([]);
    expect(engineGuardMessage(metafile, { entryPoints: [entryInput] })).toBeUndefined();
  });

  it("refuses a package left as a run-time import, which would fail in a user's repository", async () => {
    const dir = entryDir({ 'engine.mjs': "import kleur from 'kleur';\nconsole.log(kleur);\n" });
    const result = await build({
      entryPoints: [path.join(dir, 'engine.mjs')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      absWorkingDir: ROOT,
      external: ['kleur'],
      write: false,
      outfile: path.join(dir, 'out.mjs'),
      metafile: true,
      logLevel: 'silent',
    });
    expect(foreignExternals(result.metafile)).toEqual(['kleur']);
  });
});

describe('scripts/build.mjs', () => {
  it('exits non-zero, naming the package and its importer, and leaves dist/ as it was', async () => {
    const dir = entryDir(KLEUR_ENTRY);
    const before = distSnapshot();
    const result = await run(process.execPath, [BUILD], {
      cwd: ROOT,
      env: { RALPHKIT_ENGINE_ENTRY: path.join(dir, 'engine.mjs') },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('build refused');
    expect(result.stderr).toContain(
      `node_modules/kleur/index.mjs (imported by ${path.relative(ROOT, path.join(dir, 'helper.mjs'))})`,
    );
    expect(distSnapshot()).toEqual(before);
  });

  it('passes an engine of built-ins only, still writing nothing', async () => {
    const dir = entryDir(BUILTINS_ENTRY);
    const before = distSnapshot();
    const result = await run(process.execPath, [BUILD], {
      cwd: ROOT,
      env: { RALPHKIT_ENGINE_ENTRY: path.join(dir, 'engine.mjs') },
    });
    expect(result.stderr).toContain('passes the engine guard');
    expect(result.code).toBe(0);
    expect(distSnapshot()).toEqual(before);
  });
});
