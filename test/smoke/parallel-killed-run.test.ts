// A --parallel run as its owner sees it, with the real runner: `status` shows its workers while it runs; after a
// kill -9 of the runner, `status` lists the workers' worktrees as leftovers of the dead run, and `cleanup` stops the
// agents it left running and removes their worktrees. Real git, the installed ralph/ralph.sh, the built CLI.
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loopStates, startRalph } from '../support/loop-repo.js';
import { runCli, testdir } from '../support/repo.js';
import { installedRepo } from '../support/installed-repo.js';
import { goneWithin, isAlive, killWhenDone, until } from '../support/process.js';
import { parallelArgs, story as parallelStory } from '../support/parallel-repo.js';

const BRANCH = 'ralph/par';
const story = (id: string, i: number) => parallelStory({ id }, i);

describe('a --parallel run killed with -9', () => {
  it('status shows its workers while it runs; then its worker trees are leftovers, and cleanup stops their agents and removes them', async () => {
    const repo = installedRepo({
      plan: {
        project: 'Par',
        branchName: BRANCH,
        checks: ['test -f README.md'],
        userStories: ['US-001', 'US-002'].map(story),
      },
    });
    const trees = `${repo}.ralph-worktrees`;
    onTestFinished(() => rmSync(trees, { recursive: true, force: true }));
    const started = testdir('ralphkit-par-started-');
    const tmp = testdir('ralphkit-tmp-');
    // Each agent says it started, then works for a minute: long enough to be found running, and orphaned.
    const run = startRalph(repo, parallelArgs(2, 10), {
      FAKE_PAR_STARTED: started,
      FAKE_PAR_DELAY_MS: '60000',
      TMPDIR: tmp,
    });
    // A file exists before its pid is written into it (an empty file reads as pid 0, "my own group" to kill(2)).
    const pids = () => readdirSync(started).map((id) => Number(readFileSync(path.join(started, id), 'utf8')));
    await until(
      "both workers' agents started and recorded",
      () =>
        pids().filter((pid) => pid > 0).length === 2 &&
        loopStates(repo).some((s) =>
          (s as { parallel?: { states: Array<{ agentPid?: number }> } }).parallel?.states.every((w) => w.agentPid),
        ),
      30_000,
    );
    const agents = pids();
    killWhenDone(agents);
    const id = loopStates(repo)[0].id;

    const live = await runCli(['status', '--cwd', repo], { cwd: repo });
    expect(live.code, live.stderr).toBe(0);
    const lines = live.stdout.split('\n');
    const row = lines.findIndex((l) => l.startsWith(`${id} `));
    expect(lines[row], live.stdout).toMatch(/\brunning\b/);
    const workers = lines
      .slice(row + 1)
      .filter((l) => /^ {2}└ w\d/.test(l))
      .sort();
    expect(workers, live.stdout).toEqual([
      expect.stringMatching(
        /^ {2}└ w1 {2}agent {2}US-00[12] {2}iteration [12] {2}\d+(?:ms|s|m\d\ds) {2}ralph\/par--US-00[12]$/,
      ),
      expect.stringMatching(
        /^ {2}└ w2 {2}agent {2}US-00[12] {2}iteration [12] {2}\d+(?:ms|s|m\d\ds) {2}ralph\/par--US-00[12]$/,
      ),
    ]);
    expect(live.stdout).not.toContain('worktrees of loops that are not running');

    run.child.kill('SIGKILL');
    const { stderr } = await run.done;
    // Each worker's lines are tagged with it, the iteration banner too; the run's own lines are not.
    for (const n of [1, 2]) {
      expect(stderr).toMatch(new RegExp(`^━━ \\[w${n}\\] iteration [12]/10 ━━$`, 'm'));
      expect(stderr).toMatch(new RegExp(`^\\[w${n}\\] ralph: worker ${n} works on US-00[12] `, 'm'));
    }
    expect(stderr).toMatch(/^ralph: 2 workers on ralph\/par;/m);
    expect(agents.every(isAlive)).toBe(true);
    const dead = await runCli(['status', '--json', '--cwd', repo], { cwd: repo });
    const json = JSON.parse(dead.stdout) as {
      loops: Array<{ id: string; status: string }>;
      leftoverWorktrees: Array<{ id: string; worker?: number; path: string }>;
    };
    expect(json.loops.map((l) => [l.id, l.status])).toEqual([[id, 'dead']]);
    // The run's own tree (where it merges) and each worker's, all under the run's id.
    expect(json.leftoverWorktrees.map((t) => [t.id, t.worker, t.path]).sort()).toEqual([
      [id, undefined, path.join(trees, id)],
      [id, 1, path.join(trees, `${id}--w1`)],
      [id, 2, path.join(trees, `${id}--w2`)],
    ]);

    // What a runner killed during verification leaves in the temp folder (a checkout with `setup: npm ci` done), named
    // after it; beside it, a live runner's checkout and an older runner's, which name no runner: both stay.
    const leftCheckout = path.join(tmp, `ralph-verify-${id}~${run.child.pid}~-AbCdEf`);
    mkdirSync(path.join(leftCheckout, 'node_modules', 'pkg'), { recursive: true });
    const kept = [`ralph-verify-other~${process.pid}~-GhIjKl`, 'ralph-verify-MnOpQr'];
    for (const name of kept) mkdirSync(path.join(tmp, name));
    const cleaned = await runCli(['cleanup', '--cwd', repo], {
      cwd: repo,
      timeoutMs: 30_000,
      env: { ...process.env, TMPDIR: tmp },
    });
    expect(cleaned.code, cleaned.stderr).toBe(0);
    const said = `${cleaned.stdout}${cleaned.stderr}`;
    for (const n of [1, 2]) expect(said).toContain(`stopped the agent worker w${n} of loop ${id} left running`);
    expect(await Promise.all(agents.map((pid) => goneWithin(pid)))).toEqual([true, true]);
    expect(said).toContain(`removed ${path.join(trees, `${id}--w1`)} (loop ${id};`);
    expect(said).toContain(`removed ${path.join(trees, `${id}--w2`)} (loop ${id};`);
    // (and the other folders the killed runner left, by kind: "… and 1 checks' HOME folder", a setup cache)
    expect(said).toMatch(
      new RegExp(
        `removed \\d+ verification checkouts?(?:, [^()]*?)?(?: and [^()]*?)? of stopped runners from \\S+ \\(loop ${id}\\)`,
      ),
    );
    // node-compile-cache: Node 22+ keeps the engine's compile cache in the temp folder (module.enableCompileCache).
    expect(
      readdirSync(tmp)
        .filter((n) => n !== 'node-compile-cache')
        .sort(),
    ).toEqual(kept.sort());
  }, 120_000);
});
