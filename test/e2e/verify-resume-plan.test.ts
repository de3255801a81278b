// Resuming a loop (SPEC §6): the plan on disk is held against the runner's own record of it in git
// (refs/ralphkit/loops/<id>/plan), never against a file in ralph/.runs/. A half-written plan is restored from the
// record with a backup; the owner's edits are shown and need --accept-plan-edits; lost pins stop it (exit 6) or need --repin.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git, gitEnv, run, testdir } from '../support/repo.js';
import {
  attackAgent,
  copyRepo,
  passes,
  prepareTemplate,
  ralph,
  readPrd,
  type Template,
} from '../support/attack-repo.js';

/** ./ralph/ralph.sh --resume …: the same agent and options as ralph(), without --name (a resume keeps its id). */
async function resume(dir: string, args: string[]) {
  const r = await run(
    path.join(dir, 'ralph/ralph.sh'),
    [
      '--agent-cmd',
      `node ${JSON.stringify(attackAgent('honest'))}`,
      '--pause',
      '0',
      '--iteration-timeout',
      '30s',
      ...args,
    ],
    { cwd: dir, timeoutMs: 150_000 },
  );
  return { ...r, output: `${r.stdout}\n${r.stderr}` };
}

let plan: Template;
beforeAll(async () => {
  plan = await prepareTemplate();
});
afterAll(() => plan?.remove());

/** A loop that did US-1 and stopped at its limit: resumable with --resume e2e. */
async function stoppedAfterOne(): Promise<string> {
  const dir = copyRepo(plan);
  const r = await ralph(dir, 'honest', ['1']);
  expect(r.code, r.output).toBe(1);
  expect(passes(dir)).toEqual({ 'US-1': true, 'US-2': false });
  return dir;
}

describe("resuming against the runner's own record of the plan", () => {
  it('a half-written prd.json is backed up and restored from the record, and the loop finishes', async () => {
    const dir = await stoppedAfterOne();
    const prdFile = path.join(dir, 'ralph/prd.json');
    const torn = readFileSync(prdFile, 'utf8').slice(0, 120);
    writeFileSync(prdFile, torn);
    const r = await resume(dir, ['--resume', 'e2e', '3']);
    expect(r.code, r.output).toBe(0);
    expect(r.output).toMatch(
      /ralph\/prd\.json was not a readable plan \(left half-written\?\); restored the runner's last record of it, and kept the damaged file as ralph\/\.backup\/[^/]+\/ralph\/prd\.json/,
    );
    const backups = readdirSync(path.join(dir, 'ralph/.backup'));
    expect(readFileSync(path.join(dir, 'ralph/.backup', backups[0], 'ralph/prd.json'), 'utf8')).toBe(torn);
    expect(passes(dir)).toEqual({ 'US-1': true, 'US-2': true });
  });

  it('a prompt or a plan left as a link (to a file the sandbox hides, the record key) is never read through: the prompt is refused, the plan restored, the file copied nowhere', async () => {
    const dir = await stoppedAfterOne();
    const secret = path.join(testdir(), 'verdict.key');
    writeFileSync(secret, 'SECRET-KEY-0123456789\n');
    const linkTo = (file: string) => {
      rmSync(path.join(dir, file));
      symlinkSync(secret, path.join(dir, file));
    };
    // The prompt: the start is refused before any agent, saying what to restore.
    linkTo('ralph/prompt.md');
    const refused = await resume(dir, ['--resume', 'e2e', '3']);
    expect(refused.code, refused.output).toBe(2);
    expect(refused.output).toContain(`the prompt ralph/prompt.md is a symbolic link (to ${secret})`);
    expect(git(dir, 'status', '--short')).toBe('T ralph/prompt.md');
    git(dir, 'checkout', '--', 'ralph/prompt.md');
    // The plan: restored from the runner's record, the link's target neither read nor kept.
    linkTo('ralph/prd.json');
    const r = await resume(dir, ['--resume', 'e2e', '3']);
    expect(r.code, r.output).toBe(0);
    expect(r.output).toContain(
      "ralph/prd.json was not a file (a link, a pipe or a folder), left unread; restored the runner's last record of it",
    );
    expect(existsSync(path.join(dir, 'ralph/.backup'))).toBe(false);
    expect(lstatSync(path.join(dir, 'ralph/prd.json')).isFile()).toBe(true);
    expect(passes(dir)).toEqual({ 'US-1': true, 'US-2': true });
    expect(`${refused.output}${r.output}`).not.toContain('SECRET-KEY');
    expect(spawnSync('grep', ['-rl', 'SECRET-KEY', dir]).stdout.toString()).toBe('');
  });

  it("the owner's edit beyond passes and notes is listed and refused (exit 2); --accept-plan-edits continues with it", async () => {
    const dir = await stoppedAfterOne();
    const prd = readPrd(dir);
    prd.userStories[1].title = 'two() returns 2, documented';
    writeFileSync(path.join(dir, 'ralph/prd.json'), `${JSON.stringify(prd, null, 2)}\n`);
    git(dir, 'commit', '-qam', 'plan: retitle US-2');
    const head = git(dir, 'rev-parse', 'HEAD');
    const refused = await resume(dir, ['--resume', 'e2e', '3']);
    expect(refused.code, refused.output).toBe(2);
    expect(refused.output).toContain('ralph/prd.json changed since loop e2e stopped, beyond passes and notes:');
    expect(refused.output).toMatch(/US-2.*title/);
    expect(refused.output).toContain('--accept-plan-edits');
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(head); // nothing changed
    const accepted = await resume(dir, ['--resume', 'e2e', '--accept-plan-edits', '3']);
    expect(accepted.code, accepted.output).toBe(0);
    expect(readPrd(dir).userStories[1]).toMatchObject({ title: 'two() returns 2, documented', passes: true });
  });

  it('a passes flip made while the loop was stopped is a claim: checked before the agent runs, rejected without the work', async () => {
    const dir = await stoppedAfterOne();
    const prd = readPrd(dir);
    prd.userStories[1].passes = true;
    writeFileSync(path.join(dir, 'ralph/prd.json'), `${JSON.stringify(prd, null, 2)}\n`);
    const r = await resume(dir, ['--resume', 'e2e', '3']);
    expect(r.output).toMatch(/1 story says passes: true \(US-2\); verifying before the first iteration/);
    expect(r.output).toMatch(/US-2 rejected/);
    expect(r.code, r.output).toBe(0); // the agent then did US-2 for real
  });

  it('a claim rejected for changing a pinned test tells the owner what to add to "mayChange" and the command that continues; doing so, the same change passes (the owner\'s to allow)', async () => {
    const dir = copyRepo(plan);
    // The agent changes test/one.test.mjs (pinned) instead of the code: rejected, the pinned test fails.
    const first = await ralph(dir, 'weakened-test', ['1']);
    expect(first.code, first.output).toBe(1);
    expect(first.output).toContain(
      `if US-1 is meant to change it, that is the owner's to allow (the agent's own edit of "mayChange" is undone): add "test/one.test.mjs" to US-1's "mayChange" in ralph/prd.json, commit, and continue with`,
    );
    expect(first.output).toContain('and continue with ./ralph/ralph.sh --resume e2e 6 --accept-plan-edits)');
    // The owner allows it, as told.
    const prd = readPrd(dir);
    prd.userStories[0].mayChange = ['test/one.test.mjs'];
    writeFileSync(path.join(dir, 'ralph/prd.json'), `${JSON.stringify(prd, null, 2)}\n`);
    git(dir, 'commit', '-q', '-am', 'plan: US-1 may change its test');
    // That command, one iteration only (the agent never writes src/one.mjs, which US-2's npm test needs).
    const r = await run(
      path.join(dir, 'ralph/ralph.sh'),
      [
        '--agent-cmd',
        `node ${JSON.stringify(attackAgent('weakened-test'))}`,
        '--pause',
        '0',
        '--iteration-timeout',
        '30s',
        '--resume',
        'e2e',
        '2',
        '--accept-plan-edits',
      ],
      { cwd: dir },
    );
    expect(r.stderr).toContain('US-1 verified: 1 check passed');
    expect(r.code, r.stderr).toBe(1);
    expect(passes(dir)).toEqual({ 'US-1': true, 'US-2': false });
  });

  it("pins that are gone stop the resume (exit 6: the runner sealed them); --repin takes HEAD's tests on purpose", async () => {
    const dir = await stoppedAfterOne();
    git(dir, 'update-ref', '-d', 'refs/ralphkit/loops/e2e/pins');
    const refused = await resume(dir, ['--resume', 'e2e', '3']);
    expect(refused.code, refused.output).toBe(6);
    expect(refused.output).toContain(
      'refs/ralphkit/loops/e2e/pins (its plan commit: the tests checks run with) is gone',
    );
    expect(refused.output).toContain('--repin');
    const repinned = await resume(dir, ['--resume', 'e2e', '--repin', '3']);
    expect(repinned.code, repinned.output).toBe(0);
    expect(repinned.output).toContain('--repin: checks now run with the tests as committed at');
    expect(existsSync(path.join(dir, 'src/two.mjs'))).toBe(true);
  });

  it.skipIf(spawnSync('script', ['--version']).status !== 0)(
    'at a terminal the edits are shown and asked about: y continues with them, anything else refuses',
    async () => {
      for (const [answer, code] of [
        ['n', 2],
        ['y', 0],
      ] as const) {
        const dir = await stoppedAfterOne();
        const prd = readPrd(dir);
        prd.userStories[1].title = 'two() returns 2, documented';
        writeFileSync(path.join(dir, 'ralph/prd.json'), `${JSON.stringify(prd, null, 2)}\n`);
        git(dir, 'commit', '-qam', 'plan: retitle US-2');
        const r = await inTerminal(
          dir,
          ['--resume', 'e2e', '3'],
          'Are these your edits, to continue with? [y/N]',
          `${answer}\r`,
        );
        expect(r.code, r.output).toBe(code);
        expect(r.output).toMatch(/US-2.*title/);
        if (code === 0)
          expect(readPrd(dir).userStories[1]).toMatchObject({ title: 'two() returns 2, documented', passes: true });
      }
    },
  );
});

/** ./ralph/ralph.sh in a pseudo-terminal (util-linux `script`); `send` goes in once `when` appears. */
function inTerminal(
  dir: string,
  args: string[],
  when: string,
  send: string,
): Promise<{ code: number | null; output: string }> {
  const command = [
    path.join(dir, 'ralph/ralph.sh'),
    '--agent-cmd',
    `node ${attackAgent('honest')}`,
    '--pause',
    '0',
    ...args,
  ]
    .map((a) => `'${a}'`)
    .join(' ');
  return new Promise((resolve) => {
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd: dir,
      env: { ...gitEnv(), TERM: 'xterm' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    let sent = false;
    const timer = setTimeout(() => child.kill('SIGKILL'), 50_000);
    child.stdin.on('error', () => {});
    child.stdout.on('data', (d) => {
      output += d;
      if (!sent && output.includes(when)) {
        sent = true;
        child.stdin.write(send);
      }
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}
