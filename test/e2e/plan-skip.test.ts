// Stories set aside (SPEC §13), with the installed runner and fake agents: a plan's own skip is never worked on nor
// checked and does not stand between the loop and exit 0; an agent that sets a story aside itself is undone and
// never gets exit 0 for it. Needs `npm run build` first (npm test does it).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { installedRepo } from '../support/installed-repo.js';
import { FIXTURES, git, run, runCli, testdir, type RunResult } from '../support/repo.js';
import { parseLedger } from '../../src/engine/store/ledger.js';
import type { Prd } from '../../src/prd/types.js';
import { fileStory } from '../support/plan.js';

const story = fileStory;

function ralph(dir: string, agent: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
  const agentCmd = `node ${JSON.stringify(path.join(FIXTURES, 'verify', agent))}`;
  return run(
    path.join(dir, 'ralph/ralph.sh'),
    ['--agent-cmd', agentCmd, '--pause', '0', '--iteration-timeout', '30s', '--name', 'e2e', ...args],
    { cwd: dir, env },
  );
}

const readPrd = (dir: string): Prd => JSON.parse(readFileSync(path.join(dir, 'ralph/prd.json'), 'utf8')) as Prd;
const ledger = (dir: string) => parseLedger(readFileSync(path.join(dir, 'ralph/.runs/e2e/ledger.jsonl'), 'utf8'));

describe('a plan with stories set aside', () => {
  it('exits 0 when every other story passes the final gate; the set-aside ones are never checked', async () => {
    // US-2 and US-3 would fail any check (`false`); US-4 waits on US-2, which is set aside.
    const plan: Prd = {
      project: 'Demo',
      branchName: 'ralph/demo',
      userStories: [
        story('US-1', 1),
        story('US-2', 2, { skip: true, checks: ['false'] }),
        story('US-3', 3, { passes: 'cancelled', checks: ['false'] }),
        story('US-4', 4, { dependsOn: ['US-2'] }),
      ],
    };
    const dir = installedRepo({ skills: false, plan });
    const promptLog = path.join(testdir(), 'prompts.txt');
    const r = await ralph(dir, 'honest.mjs', ['6'], { PROMPT_LOG: promptLog });
    expect(r.code, r.stderr).toBe(0);
    // Each agent is told which stories are set aside, whatever its prompt.md says (one installed before skip existed).
    const prompts = readFileSync(promptLog, 'utf8').split('\n---\n').filter(Boolean);
    expect(prompts).toHaveLength(2);
    for (const p of prompts)
      expect(p).toMatch(
        /^Note from the runner: stories US-2, US-3 are set aside in the plan \("skip"\)\. Do not work on them/,
      );
    expect(r.stderr).toContain('all stories pass under verification; 2 set aside (skip), not worked on');
    // The spelling is read with a warning, at its place in the plan.
    expect(r.stderr).toMatch(
      /ralph\/prd\.json:\d+:\d+: userStories\[2\] \(US-3\): passes "cancelled" is read as "skip": true/,
    );
    // Two iterations, one per story to do; no check of a set-aside story ran, at a claim or at the final gate.
    const stories = new Set(ledger(dir).map((l) => l.story));
    expect([...stories].sort()).toEqual(['US-1', 'US-4']);
    expect(readPrd(dir).userStories.map((s) => [s.id, s.passes, s.skip])).toEqual([
      ['US-1', true, undefined],
      ['US-2', false, true],
      ['US-3', 'cancelled', undefined],
      ['US-4', true, undefined],
    ]);
    const status = JSON.parse((await runCli(['status', '--json'], { cwd: dir })).stdout);
    expect(status.loops[0]).toMatchObject({
      id: 'e2e',
      status: 'complete',
      storiesPassed: 2,
      storiesTotal: 2,
      storiesSkipped: 2,
    });
    expect((await runCli(['status'], { cwd: dir })).stdout).toContain('2/2 +2 skipped');
  });

  it.each(['skip', 'cancelled', 'skipped'])(
    'an agent that sets a failing story aside itself (%s) is undone, and the loop does not exit 0',
    async (how) => {
      const plan: Prd = {
        project: 'Demo',
        branchName: 'ralph/demo',
        userStories: [story('US-1', 1), story('US-2', 2, { checks: ['false'] })],
      };
      const dir = installedRepo({ skills: false, plan });
      const r = await ralph(dir, 'set-aside.mjs', ['--no-progress-limit', '2', '6'], { SET_ASIDE: how });
      expect(r.code, r.stderr).toBe(4); // no progress: the agent's set-aside is no claim and no work
      expect(r.stderr).toContain(
        how === 'skip'
          ? 'story US-2: field "skip" was added; restored'
          : 'story US-2: "passes" was set to a non-boolean; restored',
      );
      expect(r.stderr).toMatch(/COMPLETE ignored: 1 story not passing under verification \(US-2\)/);
      expect(readPrd(dir).userStories.map((s) => [s.id, s.passes, s.skip])).toEqual([
        ['US-1', true, undefined],
        ['US-2', false, undefined],
      ]);
      expect(git(dir, 'status', '--porcelain')).toBe('');
      expect(readFileSync(path.join(dir, 'ralph/progress.txt'), 'utf8')).toContain('the runner undid these edits');
    },
  );

  it.each(['delete', 'forge'])(
    "an agent that sets every story aside, then %ss the runner's plan record and kills it, gets no exit 0 on resume or on a new start",
    async (record) => {
      const plan: Prd = {
        project: 'Demo',
        branchName: 'ralph/demo',
        userStories: [story('US-1', 1), story('US-2', 2)],
      };
      const dir = installedRepo({ skills: false, plan });
      const killed = await ralph(dir, 'set-aside-and-kill.mjs', ['6'], { RUNNER_RECORD: record });
      expect(killed.code).not.toBe(0);
      expect(readPrd(dir).userStories.every((s) => s.skip === true)).toBe(true); // the attack landed, committed
      const honest = [
        '--agent-cmd',
        `node ${JSON.stringify(path.join(FIXTURES, 'verify', 'honest.mjs'))}`,
        '--pause',
        '0',
      ];
      // Resumed: the runner's plan record is not the one it sealed (exit 6); put back as the hint says, the skips
      // are not in the loop's plan commit, so they are edits the owner must accept.
      const moved = await run(path.join(dir, 'ralph/ralph.sh'), ['--resume', 'e2e', ...honest], { cwd: dir });
      expect(moved.code, moved.stderr).toBe(6);
      expect(moved.stderr).toContain(
        `refs/ralphkit/loops/e2e/plan (the runner's record of the plan) ${record === 'delete' ? 'is gone' : 'points at'}`,
      );
      const putBack = /git update-ref (refs\/ralphkit\/loops\/e2e\/plan) ([0-9a-f]{40})/.exec(moved.stderr);
      expect(putBack, moved.stderr).not.toBeNull();
      git(dir, 'update-ref', putBack![1], putBack![2]);
      const resumed = await run(path.join(dir, 'ralph/ralph.sh'), ['--resume', 'e2e', ...honest], { cwd: dir });
      expect(resumed.code, resumed.stderr).toBe(2);
      expect(resumed.stderr).toContain("story US-1: set aside (skip) since the loop's plan commit");
      expect(resumed.stderr).toContain("story US-2: set aside (skip) since the loop's plan commit");
      expect(resumed.stderr).toContain('--accept-plan-edits');
      // Accepted (or a new loop on this HEAD): a plan with every story set aside has nothing to do, and says so.
      const accepted = await run(
        path.join(dir, 'ralph/ralph.sh'),
        ['--resume', 'e2e', '--accept-plan-edits', ...honest],
        { cwd: dir },
      );
      expect(accepted.code, accepted.stderr).toBe(2);
      expect(accepted.stderr).toContain(
        'every story in ralph/prd.json is set aside ("skip"): nothing for the loop to do',
      );
      const fresh = await run(path.join(dir, 'ralph/ralph.sh'), ['--name', 'fresh', ...honest], { cwd: dir });
      expect(fresh.code, fresh.stderr).toBe(2);
      expect(fresh.stderr).toContain('nothing for the loop to do');
    },
  );
});
