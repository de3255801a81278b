// A repository for --parallel tests: ralphkit installed, a plan of stories with checks on one branch, and the
// readers of what the run left (the plan on the branch, the merge order, the fake agent's log of its runs).
import { onTestFinished } from 'vitest';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { git, testdir } from './repo.js';
import { installedRepo } from './installed-repo.js';
import { agent, ralph } from './loop-repo.js';
import type { RunResult } from './repo.js';
import { plan, story as baseStory } from './plan.js';
import type { Story } from '../../src/prd/types.js';

export interface StorySpec {
  id: string;
  dependsOn?: string[];
  checks?: string[];
  /** Set aside (`"skip": true`): never worked. */
  skip?: boolean;
}

export const BRANCH = 'ralph/par';

/** A --parallel story (test/support/plan.ts): checked by the file its fake agent writes, unless told otherwise. */
export function story(s: StorySpec, i: number): Story {
  return baseStory(s.id, {
    priority: i + 1,
    checks: s.checks ?? [`test -f work/${s.id}.txt`],
    ...(s.dependsOn ? { dependsOn: s.dependsOn } : {}),
    ...(s.skip ? { skip: true } : {}),
  });
}

/** An installed repository with a plan of `stories` on BRANCH; its worktrees folder goes with the test. */
export function parallelRepo(
  stories: StorySpec[],
  planChecks: string[] = ['test -f README.md'],
  setup?: string,
): string {
  const repo = installedRepo({
    plan: plan(stories.map(story), {
      project: 'Par',
      branchName: BRANCH,
      ...(setup ? { setup } : {}),
      checks: planChecks,
    }),
  });
  onTestFinished(() => rmSync(`${repo}.ralph-worktrees`, { recursive: true, force: true }));
  return repo;
}

export function planOn(
  repo: string,
  branch = BRANCH,
): { userStories: Array<{ id: string; passes: unknown; notes?: string }> } {
  return JSON.parse(git(repo, 'show', `${branch}:ralph/prd.json`));
}

/** The stories merged by the queue, in merge order (the first-parent history of the plan branch). */
export function mergeOrder(repo: string): string[] {
  return git(repo, 'log', '--first-parent', '--reverse', '--format=%s', BRANCH)
    .split('\n')
    .flatMap((s) => /^ralph: merge (\S+)/.exec(s)?.[1] ?? []);
}

export interface LogLine {
  story: string;
  iteration: number;
  cwd: string;
  seen: string[];
  /** The stories the runner's note said were merged since this story's last attempt. */
  since: string[];
}

export function readLog(file: string): LogLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [s, it, cwd, seen, since] = l.split(' ');
      return {
        story: s,
        iteration: Number(it),
        cwd,
        seen: seen ? seen.split(',') : [],
        since: since ? since.split(',') : [],
      };
    });
}

/** The arguments of a --parallel run of the story worker: `--parallel <workers> [...extra] --agent-cmd <story-worker> --pause 0 <max>`. */
export function parallelArgs(workers: number, max: number, extra: string[] = []): string[] {
  return ['--parallel', String(workers), ...extra, '--agent-cmd', agent('story-worker'), '--pause', '0', String(max)];
}

/** That run, waited for (two minutes at most). */
export function parallelRalph(
  repo: string,
  workers: number,
  max: number,
  env: NodeJS.ProcessEnv,
  extra: string[] = [],
): Promise<RunResult> {
  return ralph(repo, parallelArgs(workers, max, extra), env, 120_000);
}

export function fakeEnv(extra: Record<string, string> = {}) {
  const dir = testdir('ralphkit-par-');
  return { log: path.join(dir, 'log'), env: { FAKE_PAR_LOG: path.join(dir, 'log'), FAKE_PAR_MARKS: dir, ...extra } };
}

/** The runs the loop's ledger records (ralph/.runs/<loop>/ledger.jsonl): setups and checks, on story branches and in the merge queue's gates. */
export function countRuns(repo: string): {
  branch: { setups: number; checks: number };
  gate: { setups: number; checks: number; passes: number };
} {
  const runs = path.join(repo, 'ralph', '.runs');
  const lines = readdirSync(runs).flatMap((d) => {
    const f = path.join(runs, d, 'ledger.jsonl');
    return existsSync(f)
      ? readFileSync(f, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map(
            (l) => JSON.parse(l) as { kind: string; scope?: string; shared?: boolean; gate?: boolean; commit?: string },
          )
      : [];
  });
  // A run recorded for a second story in the same checkout (shared) ran once.
  const ran = lines.filter((l) => l.kind === 'check' && !l.shared);
  const count = (gate: boolean) => ran.filter((l) => !!l.gate === gate);
  return {
    branch: {
      setups: count(false).filter((l) => l.scope === 'setup').length,
      checks: count(false).filter((l) => l.scope !== 'setup').length,
    },
    gate: {
      setups: count(true).filter((l) => l.scope === 'setup').length,
      checks: count(true).filter((l) => l.scope !== 'setup').length,
      passes: new Set(count(true).map((l) => l.commit)).size,
    },
  };
}
