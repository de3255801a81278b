// `ralph/ralph.sh --parallel 2 --agent claude` driving the real Claude Code CLI, whose "model" is the scripted
// server: each CLI run is told its story by the runner's prompt, works in its worker's worktree, and the runner
// merges what it verified onto the plan's branch. Issue #14: "e2e with the real Claude Code CLI and --parallel 2".
import { existsSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { describe, expect, it, onTestFinished } from 'vitest';
import { git, gitEnv } from '../support/repo.js';
import { installedRepo } from '../support/installed-repo.js';
import { startModelServer } from '../support/model-server.js';
import { assignedWorker } from '../support/model-scenarios.js';
import { SKIP_CLAUDE, requireClaude } from '../support/model-claude.js';
import { ralphWithClaude } from '../support/model-loop.js';

const BRANCH = 'ralph/greeter';

// Two independent stories, and a third that needs both: its work reads the files they wrote, so it can only pass
// if it started from a plan branch that already held them.
const PLAN = {
  project: 'Greeter',
  branchName: BRANCH,
  checks: ['test -f README.md'],
  userStories: [
    {
      id: 'US-001',
      title: 'Say one',
      acceptanceCriteria: ['one.txt says one'],
      priority: 1,
      passes: false,
      notes: '',
      dependsOn: [],
      checks: ['grep -qx one one.txt'],
    },
    {
      id: 'US-002',
      title: 'Say two',
      acceptanceCriteria: ['two.txt says two'],
      priority: 2,
      passes: false,
      notes: '',
      dependsOn: [],
      checks: ['grep -qx two two.txt'],
    },
    {
      id: 'US-003',
      title: 'Say both',
      acceptanceCriteria: ['both.txt joins them'],
      priority: 3,
      passes: false,
      notes: '',
      dependsOn: ['US-001', 'US-002'],
      checks: ['grep -qx "one two" both.txt'],
    },
  ],
};

const WORK: Record<string, string> = {
  'US-001': 'echo one > one.txt',
  'US-002': 'echo two > two.txt',
  'US-003': 'echo "$(cat one.txt) $(cat two.txt)" > both.txt',
};

/**
 * Holds the first run of each of `ids` until all of them have started: two workers must have their agents running
 * at once. A run that stays alone fails its request (and so the test) after `timeoutMs`.
 */
function meeting(ids: string[], timeoutMs: number): (id: string) => Promise<void> {
  const arrived = new Set<string>();
  let everyone!: () => void;
  const all = new Promise<void>((resolve) => (everyone = resolve));
  return async (id) => {
    if (!ids.includes(id)) return;
    arrived.add(id);
    if (arrived.size === ids.length) everyone();
    let timer: NodeJS.Timeout | undefined;
    const alone = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${id} waited ${timeoutMs} ms alone: only ${[...arrived].join(', ')} started`)),
        timeoutMs,
      );
    });
    await Promise.race([all, alone]).finally(() => clearTimeout(timer));
  };
}

function isAncestor(repo: string, commit: string, of: string): boolean {
  try {
    execFileSync('git', ['merge-base', '--is-ancestor', commit, of], { cwd: repo, env: gitEnv(), stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The merge commit on the plan branch's first-parent line that brought `commit` in (it was not there before). */
function mergeThatBrought(repo: string, commit: string): string | undefined {
  const merges = git(repo, 'log', '--first-parent', '--merges', '--format=%H %P', BRANCH).split('\n').filter(Boolean);
  return merges
    .map((l) => l.split(' '))
    .find(([, first, second]) => isAncestor(repo, commit, second) && !isAncestor(repo, commit, first))?.[0];
}

describe.skipIf(SKIP_CLAUDE)('ralph.sh --parallel 2 --agent claude with the real Claude Code CLI', () => {
  it('works two independent stories on two workers at once, merges each, then the story that needs both', {
    timeout: 150_000,
  }, async () => {
    requireClaude();
    const repo = installedRepo({ plan: PLAN, message: 'chore: install ralphkit and plan' });
    onTestFinished(() => rmSync(`${repo}.ralph-worktrees`, { recursive: true, force: true }));
    const starts: Array<{ story: string; cwd: string }> = [];
    const meet = meeting(['US-001', 'US-002'], 40_000);
    const scenario = assignedWorker({
      work: (id) => WORK[id],
      onStart: async (story, cwd) => {
        const again = starts.some((s) => s.story === story);
        starts.push({ story, cwd });
        if (!again) await meet(story);
      },
    });
    const server = await startModelServer({ scenario });
    onTestFinished(() => server.close());
    const head = git(repo, 'rev-parse', 'HEAD');

    const res = await ralphWithClaude(repo, server, ['--parallel', '2', '6'], { timeoutMs: 130_000 });

    expect(server.errors).toEqual([]);
    expect(res.code, res.stderr).toBe(0);
    // The user's tree was left alone: still main at the same commit, no tracked file changed.
    expect(git(repo, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('main');
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(repo, 'status', '--porcelain', '--untracked-files=no')).toBe('');
    // Every story passes on the plan branch, and the last one's work saw the first two's.
    const plan = JSON.parse(git(repo, 'show', `${BRANCH}:ralph/prd.json`)) as typeof PLAN;
    expect(plan.userStories.map((s) => [s.id, s.passes])).toEqual([
      ['US-001', true],
      ['US-002', true],
      ['US-003', true],
    ]);
    expect(git(repo, 'show', `${BRANCH}:both.txt`)).toBe('one two');

    // Each story's commit arrived on the plan branch by a merge of its own; the story that needs both came last.
    const merges = PLAN.userStories.map(({ id }) => {
      const feats = git(repo, 'log', '--format=%H', `--grep=^feat: ${id}$`, BRANCH).split('\n').filter(Boolean);
      expect(feats, id).toHaveLength(1);
      const merge = mergeThatBrought(repo, feats[0]);
      expect(merge, `${id} was not brought in by a merge commit`).toBeDefined();
      return merge!;
    });
    expect(new Set(merges).size).toBe(3);
    expect(git(repo, 'log', '--first-parent', '--merges', '-1', '--format=%H', BRANCH)).toBe(merges[2]);

    // The two independent stories ran in two different worker worktrees (beside the repository, gone after the run).
    const first = (id: string) => starts.find((s) => s.story === id)!.cwd;
    expect(first('US-001')).not.toBe(first('US-002'));
    for (const { cwd } of starts) {
      expect(cwd.startsWith(`${repo}.ralph-worktrees/`), cwd).toBe(true);
      expect(existsSync(cwd), `${cwd} left behind`).toBe(false);
    }
  });
});
