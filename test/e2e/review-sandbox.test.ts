// The reviewer under --sandbox, with real bubblewrap: it runs in the same sandbox as the checks, so only its clone,
// its private answer folder and a HOME layer of its own (dropped after the review) are writable; an honest reviewer still SHIPs, and one that tries to write into
// the real repository or elsewhere on the host is refused by the kernel, not undone afterwards.
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { probeSandbox } from '../../src/engine/agents/sandbox.js';
import { installedRepo } from '../support/installed-repo.js';
import { FIXTURES, git, run, testdir } from '../support/repo.js';
import { reviewLines, reviewPlan, reviewStory } from '../support/review.js';
import { readKey } from '../../src/engine/store/verdict-record.js';

/** The fixtures copied into .git/ (the sandbox's /tmp is private, and this checkout may live under /tmp). */
function ralph(dir: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const fixtures = path.join(dir, '.git', 'test-fixtures');
  cpSync(path.join(FIXTURES), fixtures, { recursive: true });
  const node = (name: string) => `node ${JSON.stringify(path.join(fixtures, 'review', name))}`;
  const base = [
    '--sandbox',
    '--agent-cmd',
    node('implementer.mjs'),
    '--review-cmd',
    node('reviewer.mjs'),
    '--pause',
    '0',
    '--iteration-timeout',
    '30s',
    '--name',
    'e2e',
  ];
  return run(path.join(dir, 'ralph/ralph.sh'), [...base, ...args], { cwd: dir, env });
}

const reviewerLogs = (dir: string) => {
  const runs = path.join(dir, 'ralph/.runs/e2e');
  return readdirSync(runs)
    .filter((f) => f.includes('.review-'))
    .sort()
    .map((f) => readFileSync(path.join(runs, f), 'utf8'))
    .join('\n');
};

const probe = probeSandbox(process.env);

describe.skipIf(!probe.ok)(`the reviewer under --sandbox${probe.ok ? '' : ` (skipped: ${probe.message})`}`, () => {
  it('an honest reviewer still REVISEs, then SHIPs: exit 0', async () => {
    const dir = installedRepo({ skills: false, plan: reviewPlan(reviewStory('US-1', 1)) });
    const r = await ralph(dir, ['3']);
    expect(r.code, r.stderr).toBe(0);
    expect(reviewLines(dir).map((l) => l.verdict)).toEqual(['revise', 'ship']);
  });

  it('a reviewer that writes into the real repository and a host folder outside its clone is refused, its HOME writes stay in its layer, and it cannot read the verdict key: nothing written, its answers count', async () => {
    const dir = installedRepo({ skills: false, plan: reviewPlan(reviewStory('US-1', 1)) });
    // Not under /tmp (a private tmpfs in the sandbox, where a write would vanish unseen) nor under HOME (writable).
    const host = mkdtempSync('/var/tmp/ralphkit-outside-');
    onTestFinished(() => rmSync(host, { recursive: true, force: true }));
    const outside = path.join(host, 'outside.txt');
    const targets = [path.join(dir, 'ESCAPED.txt'), path.join(dir, 'ralph', 'prd.json'), outside];
    // The user's key, there before the loop starts: the reviewer sees an empty folder where it is.
    const home = testdir('ralphkit-home-');
    const env = { HOME: home, XDG_CONFIG_HOME: '', RALPH_KEY_DIR: '' };
    const key = readKey(true, env)!;
    const keyFile = path.join(home, '.config', 'ralphkit', 'verdict.key');
    const prdBefore = readFileSync(path.join(dir, 'ralph', 'prd.json'), 'utf8');
    // A shell profile in HOME: written in the reviewer's layer, never in the user's HOME.
    const profile = path.join(home, '.profile');
    const targetFile = path.join(host, 'targets');
    writeFileSync(targetFile, [...targets, profile].join('\n'));
    const r = await ralph(dir, ['3'], {
      ...env,
      REVIEW_MODE: 'escape',
      ESCAPE_TARGET_FILE: targetFile,
      READ_TARGET: keyFile,
    });
    // Without the sandbox the runner would find the repository changed, put it back, and count no SHIP.
    expect(r.code, r.stderr).toBe(0);
    expect(reviewLines(dir).map((l) => l.verdict)).toEqual(['revise', 'ship']);
    for (const t of targets) expect(reviewerLogs(dir)).toContain(`could not write ${t} (EROFS)`);
    expect(reviewerLogs(dir)).toContain(`could not read ${keyFile} (ENOENT)`);
    expect(reviewerLogs(dir)).toContain(`wrote ${profile}`);
    expect(existsSync(profile)).toBe(false);
    expect(readFileSync(keyFile)).toEqual(key);
    expect(existsSync(targets[0])).toBe(false);
    expect(existsSync(outside)).toBe(false);
    expect(git(dir, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    expect(readFileSync(path.join(dir, 'ralph', 'prd.json'), 'utf8')).not.toBe(prdBefore); // the runner's own settle, not the reviewer's
    expect(readFileSync(path.join(dir, 'ralph', 'prd.json'), 'utf8')).not.toContain('written by the reviewer');
  });
});
