// The commands ralphkit prints (install's "Next" lines, every hint) must work when pasted into a shell, however
// this ralphkit was started: from a global install of a clone (README's set-up), as `node <clone>/bin/ralphkit.js`,
// or as the installed engine. The package is not on the registry, so `npx ralphkit` would answer 404 here.
// Needs `npm run build` first (npm test does it): the global install links this checkout, dist/ included.
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { BIN, ROOT, cliAsTyped, gitdir, run, testdir } from '../support/repo.js';
import { installedRepo } from '../support/installed-repo.js';

// The user's shell: no node_modules/.bin folders that npm or npx put on PATH for the test run.
const SHELL_PATH = (process.env.PATH ?? '').split(path.delimiter).filter((d) => d && !/node_modules[\\/]\.bin/.test(d));

/** Runs `line` exactly as printed, through a shell, with `bin` first on PATH. */
function asTyped(line: string, cwd: string, bin?: string) {
  const PATH = [...(bin ? [bin] : []), ...SHELL_PATH].join(path.delimiter);
  return run('sh', ['-c', line], { cwd, env: { PATH } });
}

/** The command in a "  2. <command>" line of install's Next block. */
function nextStep(stdout: string, n: number): string {
  const line = stdout.split('\n').find((l) => l.startsWith(`  ${n}. `));
  expect(line, stdout).toBeDefined();
  return line!.slice(`  ${n}. `.length);
}

describe('hints that work as typed', () => {
  it("after README's `npm install -g .`, install names `ralphkit validate`, and that command runs", async () => {
    const prefix = testdir('ralphkit-prefix-');
    const setup = await run('npm', ['install', '-g', '.', '--prefix', prefix, '--no-audit', '--no-fund', '--offline'], {
      cwd: ROOT,
      timeoutMs: 120_000,
    });
    expect(setup.code, setup.stderr).toBe(0);
    const binDir = path.join(prefix, 'bin');
    const version = await asTyped('ralphkit --version', ROOT, binDir);
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version);

    const repo = gitdir();
    const installed = await asTyped('ralphkit install --yes', repo, binDir);
    expect(installed.code, installed.stderr).toBe(0);
    const validate = nextStep(installed.stdout, 2);
    expect(validate).toBe('ralphkit validate');
    const checked = await asTyped(validate, repo, binDir);
    expect(checked.stderr).not.toMatch(/not found|404/);
    expect(checked.code, checked.stderr).toBe(0);
    expect(checked.stdout).toContain('ralph/prd.json');
  }, 180_000);

  it('started as `node <clone>/bin/ralphkit.js`, its hints name that command, and the named install runs', async () => {
    const repo = gitdir();
    const refused = await run('sh', ['-c', `${cliAsTyped()} validate`], {
      cwd: repo,
      env: { PATH: SHELL_PATH.join(path.delimiter) },
    });
    expect(refused.code).toBe(2);
    const hint = /hint: (.*) creates ralph\/prd\.json/.exec(refused.stderr)?.[1];
    expect(hint, refused.stderr).toBe(`node ${BIN} install`);
    const install = await asTyped(`${hint} --yes`, repo);
    expect(install.code, install.stderr).toBe(0);
    expect(existsSync(path.join(repo, 'ralph/prd.json'))).toBe(true);
    expect(nextStep(install.stdout, 2)).toBe(`node ${BIN} validate`);
    expect((await asTyped(nextStep(install.stdout, 2), repo)).code).toBe(0);
  });

  it('the installed engine names its own subcommands as it was started (./ralph/ralph.sh status, node ralph/ralph.mjs status), which run as typed', async () => {
    const repo = installedRepo();
    for (const [typed, words] of [
      ['./ralph/ralph.sh --resume nope', './ralph/ralph.sh'],
      ['node ralph/ralph.mjs run --resume nope', 'node ralph/ralph.mjs'],
    ]) {
      const refused = await asTyped(typed, repo);
      expect(refused.code).toBe(2);
      const hint = /hint: list loops with: (.*)$/m.exec(refused.stderr)?.[1];
      expect(hint, refused.stderr).toBe(`${words} status`);
      const status = await asTyped(hint!, repo);
      expect(status.code, status.stderr).toBe(0);
    }
  });
});
