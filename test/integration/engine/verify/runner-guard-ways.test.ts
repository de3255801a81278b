// The guard puts back what the agent changed of the files the runner trusts, outside the sandbox. An adversarial pass
// replaced .git/info (the agent's to write under --sandbox too) with a link to a folder of the user's: putting back
// info/attributes, info/grafts and info/exclude removed the user's files there and wrote git's. A folder on the way
// to a held file is now held as it was (a folder, or a link to the same place) and put back without being followed.
import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { restoreRunnerFiles, snapshotRunnerFiles } from '../../../../src/engine/verify/runner-guard.js';
import { git, gitdir, testdir, writeFiles } from '../../../support/repo.js';
import { runGit } from '../../../../src/engine/git/git.js';
import { createCheckout, removeCheckout, resetCheckoutGit } from '../../../../src/engine/verify/checkout.js';

describe('the guard and the folders on the way to what it holds', () => {
  it(".git/info made a link to a folder of the user's: nothing there is removed or written; the folder is made again, its files put back, the claims rejected", async () => {
    const repo = gitdir();
    writeFiles(repo, { '.git/info/exclude': '# mine\nbuild/\n' });
    const guard = await snapshotRunnerFiles(repo);
    const victim = testdir('ralphkit-victim-');
    writeFiles(victim, { attributes: 'precious\n', 'exclude/data.txt': 'precious too\n' });
    renameSync(path.join(repo, '.git/info'), path.join(repo, '.git/info.old'));
    symlinkSync(victim, path.join(repo, '.git/info'));
    const restored = restoreRunnerFiles(guard);
    expect(readFileSync(path.join(victim, 'attributes'), 'utf8')).toBe('precious\n');
    expect(readFileSync(path.join(victim, 'exclude/data.txt'), 'utf8')).toBe('precious too\n');
    expect(lstatSync(path.join(repo, '.git/info')).isDirectory()).toBe(true);
    expect(readFileSync(path.join(repo, '.git/info/exclude'), 'utf8')).toBe('# mine\nbuild/\n');
    expect(restored.rejecting).toContainEqual(
      expect.stringContaining('(a folder on the way to a file the runner holds)'),
    );
  });

  it('a folder that was a link when the loop started (a dotfiles ~/.config) stays that link; one pointed elsewhere is pointed back', async () => {
    const repo = gitdir();
    const home = testdir('ralphkit-home-');
    const dotfiles = testdir('ralphkit-dotfiles-');
    mkdirSync(path.join(dotfiles, 'git'));
    writeFiles(dotfiles, { 'git/config': '[user]\n\tname = Me\n' });
    symlinkSync(dotfiles, path.join(home, '.config'));
    const before = process.env.HOME;
    process.env.HOME = home;
    try {
      const guard = await snapshotRunnerFiles(repo);
      expect(restoreRunnerFiles(guard).changed).toEqual([]);
      expect(readlinkSync(path.join(home, '.config'))).toBe(dotfiles);
      const other = testdir('ralphkit-other-');
      writeFiles(other, { 'git/config': '[filter "x"]\n\tsmudge = touch pwned\n' });
      renameSync(path.join(home, '.config'), path.join(home, '.config.moved'));
      symlinkSync(other, path.join(home, '.config'));
      expect(restoreRunnerFiles(guard).rejecting).toContainEqual(
        expect.stringContaining('~/.config (a folder on the way'),
      );
      expect(readlinkSync(path.join(home, '.config'))).toBe(dotfiles);
      expect(existsSync(path.join(other, 'git/config'))).toBe(true);
    } finally {
      process.env.HOME = before;
    }
  });

  it("a link among git's logs (to a file of the user's the runner's commits would append to) is removed, never written through", async () => {
    const repo = gitdir();
    const guard = await snapshotRunnerFiles(repo);
    const victim = path.join(testdir('ralphkit-victim-'), 'notes.txt');
    writeFiles(path.dirname(victim), { 'notes.txt': 'mine\n' });
    renameSync(path.join(repo, '.git/logs/HEAD'), path.join(repo, '.git/logs/HEAD.old'));
    symlinkSync(victim, path.join(repo, '.git/logs/HEAD'));
    expect(restoreRunnerFiles(guard).rejecting).toContainEqual(expect.stringContaining("(a link among git's logs)"));
    expect(existsSync(path.join(repo, '.git/logs/HEAD'))).toBe(false);
    expect(readFileSync(victim, 'utf8')).toBe('mine\n');
    // One there when the loop started is yours (git-new-workdir links logs/refs): kept.
    const shared = testdir('ralphkit-shared-logs-');
    renameSync(path.join(repo, '.git/logs/refs'), path.join(shared, 'refs'));
    symlinkSync(path.join(shared, 'refs'), path.join(repo, '.git/logs/refs'));
    const again = await snapshotRunnerFiles(repo);
    expect(restoreRunnerFiles(again).changed).toEqual([]);
    expect(readlinkSync(path.join(repo, '.git/logs/refs'))).toBe(path.join(shared, 'refs'));
  });

  it("a link among git's worktree folders (which git worktree prune would empty, following it) is removed, by the guard and before any runner git worktree command", async () => {
    const repo = gitdir();
    const guard = await snapshotRunnerFiles(repo);
    const victim = testdir('ralphkit-victim-');
    writeFiles(victim, { 'data.txt': 'mine\n', 'sub/more.txt': 'mine too\n' });
    mkdirSync(path.join(repo, '.git/worktrees'));
    symlinkSync(victim, path.join(repo, '.git/worktrees/zz'));
    expect(restoreRunnerFiles(guard).rejecting).toContainEqual(
      expect.stringContaining("(a link among git's worktree folders)"),
    );
    expect(existsSync(path.join(repo, '.git/worktrees/zz'))).toBe(false);
    // Planted again while no guard looks (another worker's agent runs): the prune itself does not follow it.
    symlinkSync(victim, path.join(repo, '.git/worktrees/zz'));
    await runGit(repo, ['worktree', 'prune']);
    expect(readFileSync(path.join(victim, 'data.txt'), 'utf8')).toBe('mine\n');
    expect(readFileSync(path.join(victim, 'sub/more.txt'), 'utf8')).toBe('mine too\n');
  });

  it(".git/info of a verification checkout made a link by setup's code: resetting the checkout's git removes the link, not the file of yours it leads to", async () => {
    const repo = gitdir();
    const checkout = await createCheckout(repo, git(repo, 'rev-parse', 'HEAD'), null);
    onTestFinished(() => removeCheckout(checkout.dir));
    const victim = testdir('ralphkit-victim-');
    writeFiles(victim, { attributes: 'mine\n' });
    rmSync(path.join(checkout.dir, '.git/info'), { recursive: true, force: true });
    symlinkSync(victim, path.join(checkout.dir, '.git/info'));
    resetCheckoutGit(checkout);
    expect(readFileSync(path.join(victim, 'attributes'), 'utf8')).toBe('mine\n');
    expect(existsSync(path.join(checkout.dir, '.git/info'))).toBe(false);
  });
});
