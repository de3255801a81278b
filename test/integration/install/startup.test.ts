// What the built CLI loads: each command's code is in chunks of dist/ loaded when it runs, so
// `ralphkit install` (its own entry, dist/install.js) reads none of the engine, the dashboard, the plan validator,
// the YAML parser or the terminal prompt, and `--help` not even install's code. Observed with a module loader hook that
// records every file the process loads. Needs `npm run build` first.
import { readFileSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BIN, ROOT, gitdir, run, testdir } from '../../support/repo.js';

const HEAVY = {
  engine: '// src/engine/run.ts',
  dashboard: '// src/view/server.ts',
  validator: '// src/prd/validate.ts',
  yaml: '// node_modules/js-yaml/',
  frontmatter: '// node_modules/gray-matter/',
  'change-case': '// node_modules/change-case/',
  prompts: '// node_modules/prompts/',
};

/** Runs the built CLI with `args`; returns its result and the parts of dist/ it loaded. */
async function loadedBy(args: string[], cwd: string) {
  const dir = testdir('ralphkit-hooks-');
  const log = path.join(dir, 'loaded.txt');
  writeFileSync(log, '');
  writeFileSync(
    path.join(dir, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs';\nexport async function load(url, context, next) {\n  if (url.startsWith('file:')) appendFileSync(${JSON.stringify(log)}, url + '\\n');\n  return next(url, context);\n}\n`,
  );
  writeFileSync(
    path.join(dir, 'register.mjs'),
    `import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n`,
  );
  const result = await run(process.execPath, ['--import', path.join(dir, 'register.mjs'), BIN, ...args], { cwd });
  const dist = path.join(ROOT, 'dist');
  const files = readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((url) => fileURLToPath(url))
    .filter((f) => f.startsWith(dist + path.sep));
  const source = files.map((f) => readFileSync(f, 'utf8')).join('\n');
  const present = Object.entries(HEAVY)
    .filter(([, marker]) => source.includes(marker))
    .map(([name]) => name);
  return { result, files: files.map((f) => path.relative(dist, f)), present, source };
}

describe.skipIf(typeof module.register !== 'function')('what the built CLI loads', () => {
  it('install loads its own code and none of the heavy parts', async () => {
    const repo = gitdir();
    const { result, files, present, source } = await loadedBy(['install', '--yes', '--cwd', repo], repo);
    expect(result.code).toBe(0);
    // install's own entry (src/cli-install.ts): a handful of files, not the whole CLI's.
    expect(files).toContain('install.js');
    expect(files).not.toContain('cli.js');
    expect(files.length).toBeLessThanOrEqual(8);
    expect(source).toContain('// src/install/apply.ts');
    expect(present).toEqual([]);
  });

  it("--help loads neither install's code nor any heavy part", async () => {
    const { result, present, source } = await loadedBy(['--help'], ROOT);
    expect(result.code).toBe(0);
    expect(source).not.toContain('// src/install/');
    expect(present).toEqual([]);
  });

  it('the markers are real: a command that needs the validator loads it', async () => {
    const { present } = await loadedBy(['validate', path.join(ROOT, 'templates/ralph/prd.json')], ROOT);
    expect(present).toContain('validator');
  });
});
