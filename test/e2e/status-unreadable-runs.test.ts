// `ralphkit status` on a ralph/.runs/ it cannot read must say so (exit 2, the folder, the OS error, a hint), never
// "no loops yet": that answer would tell a user whose loops are running that none are. Needs `npm run build` first.
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ROOT, gitdir, run, runCli, testdir } from '../support/repo.js';
import { handOver, runCliAsNobody } from '../support/nobody.js';
import { writeLoop } from '../support/view-fixtures.js';

const NO_LOOPS = /no loops yet/;
const NO_STACK = /\n\s+at /;

describe('ralphkit status on a ralph/.runs/ it cannot read', () => {
  it('a file where the folder should be: exit 2, the path and the error, a hint, nothing on stdout (also with --json)', async () => {
    const dir = gitdir({ 'ralph/.gitignore': '.runs\n' });
    writeFileSync(path.join(dir, 'ralph/.runs'), 'not a folder\n');
    for (const args of [['status'], ['status', '--json']]) {
      const r = await runCli([...args, '--cwd', dir]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(
        /could not read ralph\/\.runs\/ \(ENOTDIR: not a directory\), so the loops cannot be listed/,
      );
      expect(r.stderr).toContain('ralph/.runs (or a folder above it) is a file, not a folder: move the file away');
      expect(r.stderr).not.toMatch(NO_LOOPS);
      expect(r.stderr).not.toMatch(NO_STACK);
    }
    // The runner's own status command (ralph.sh status, node ralph/ralph.mjs status) says the same.
    const engine = await run(process.execPath, [path.join(ROOT, 'dist/ralph.mjs'), 'status'], { cwd: dir });
    expect(engine.code, engine.stderr).toBe(2);
    expect(engine.stderr).toMatch(/^ralph: could not read ralph\/\.runs\/ \(ENOTDIR: not a directory\)/m);
  });

  it('a folder this user may not read (mode 000; run as nobody under root): exit 2 with EACCES, not an empty list', async () => {
    const dir = gitdir();
    const home = testdir();
    writeLoop(dir, { id: 'mine', status: 'complete', exitCode: 0 });
    handOver(dir, home);
    const runs = path.join(dir, 'ralph/.runs');
    chmodSync(runs, 0o000);
    onTestFinished(() => chmodSync(runs, 0o755));
    const r = await runCliAsNobody(['status', '--cwd', dir], { env: { HOME: home } });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(
      /could not read ralph\/\.runs\/ \(EACCES: permission denied\), so the loops cannot be listed/,
    );
    expect(r.stderr).toContain(
      'run status as the user who started the loops, or make ralph/.runs/ readable for this user (chmod u+rx ralph/.runs)',
    );
    expect(r.stdout).not.toMatch(NO_LOOPS);
    expect(r.stderr).not.toMatch(NO_STACK);
    chmodSync(runs, 0o755);
    const readable = await runCliAsNobody(['status', '--cwd', dir], { env: { HOME: home } });
    expect(readable.code, readable.stderr).toBe(0);
    expect(readable.stdout).toMatch(/^mine\s+complete\s/m);
  });

  it('no ralph/.runs/ at all is still "no loops yet", exit 0', async () => {
    const dir = gitdir();
    const r = await runCli(['status', '--cwd', dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(NO_LOOPS);
    const json = await runCli(['status', '--json', '--cwd', dir]);
    expect(JSON.parse(json.stdout)).toEqual({ loops: [], leftoverWorktrees: [] });
  });
});
