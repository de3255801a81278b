// The built CLI over an install it should repair (a runner that lost its execute bit) or must not
// downgrade (an install recorded by a newer ralphkit). Run `npm run build` first; `npm test` does.
import { describe, expect, it } from 'vitest';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { cliAsTyped, gitdir, run, runCli } from '../support/repo.js';
import { snapshotTree } from '../support/fake-package.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe('ralphkit install repairs and guards an earlier install (built CLI)', () => {
  it('makes a runner that lost its execute bit runnable again', async () => {
    const repo = gitdir();
    expect((await runCli(['install'], { cwd: repo })).code).toBe(0);
    const runner = path.join(repo, 'ralph/ralph.sh');
    chmodSync(runner, 0o644);
    expect(await run(runner, ['--help'], { cwd: repo }).catch((err: NodeJS.ErrnoException) => err.code)).toBe('EACCES');

    const res = await runCli(['install'], { cwd: repo });
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(
      /^ {2}fix-mode {4}ralph\/ralph\.sh +up to date, but not executable: made executable again$/m,
    );
    expect(res.stdout).toMatch(/^Done: 1 fix-mode, \d+ identical/m);
    expect(statSync(runner).mode & 0o777).toBe(0o755);
    expect((await run(runner, ['--help'], { cwd: repo })).code).toBe(0);
  });

  it('names the repair fix-mode in --json', async () => {
    const repo = gitdir();
    expect((await runCli(['install'], { cwd: repo })).code).toBe(0);
    chmodSync(path.join(repo, 'ralph/ralph.sh'), 0o600);
    const res = await runCli(['install', '--json'], { cwd: repo });
    expect(res.code).toBe(0);
    const doc = JSON.parse(res.stdout);
    expect(doc.files.find((f: { path: string }) => f.path === 'ralph/ralph.sh')).toMatchObject({
      action: 'fix-mode',
      class: 'managed',
    });
    expect(doc.files.filter((f: { action: string }) => f.action === 'upgrade')).toEqual([]);
    expect(statSync(path.join(repo, 'ralph/ralph.sh')).mode & 0o777).toBe(0o755);
  });

  it('refuses to put older files over an install by a newer ralphkit, and says what to type', async () => {
    const repo = gitdir();
    await runCli(['install'], { cwd: repo });
    const manifestPath = path.join(repo, 'ralph/.ralphkit.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    const newerEngine = '// the engine of a newer ralphkit\n';
    writeFileSync(path.join(repo, 'ralph/ralph.mjs'), newerEngine);
    manifest.files['ralph/ralph.mjs'].sha256 = sha(newerEngine);
    manifest.ralphkit = '99.0.0';
    writeFileSync(manifestPath, JSON.stringify(manifest));
    const tree = snapshotTree(repo);

    const res = await runCli(['install'], { cwd: repo });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('set up by ralphkit 99.0.0, newer than this ralphkit');
    expect(res.stderr).toContain(`then run \`${cliAsTyped()} install\``);
    expect(snapshotTree(repo)).toEqual(tree);

    const forced = await runCli(['install', '--force'], { cwd: repo });
    expect(forced.code).toBe(0);
    expect(readFileSync(path.join(repo, 'ralph/ralph.mjs'), 'utf8')).not.toBe(newerEngine);
  });
});
