// Fixture files for the dashboard tests: plans, loop states and ledgers written the way the engine
// writes them (SPEC §4–§6), so the view can be tested before and independently of a real loop.
import { writeFileSync, mkdirSync, renameSync } from 'node:fs';
import path from 'node:path';
import type { Prd, Story } from '../../src/prd/types.js';
import type { ParallelState } from '../../src/engine/store/state-types.js';
import { git } from './repo.js';
import { plan as basePlan, story as baseStory, storyId } from './plan.js';

/** A dashboard story (test/support/plan.ts): a description, notes and dependencies as a real plan has them. */
export function story(id: string, overrides: Partial<Story> = {}): Story {
  return baseStory(id, {
    description: `As a user I want ${id}.`,
    acceptanceCriteria: ['Typecheck passes'],
    notes: '',
    dependsOn: [],
    ...overrides,
  });
}

/** A plan with `n` stories, two chains side by side: US-001 ← US-003 ← US-005 …, US-002 ← US-004 … */
export function plan(n = 4, overrides: Partial<Prd> = {}): Prd {
  const stories = Array.from({ length: n }, (_, i) =>
    story(storyId(i + 1), {
      title: `Story number ${i + 1}`,
      priority: i + 1,
      dependsOn: i >= 2 ? [storyId(i - 1)] : [],
    }),
  );
  const { userStories, ...fields } = overrides;
  return basePlan(userStories ?? stories, {
    project: 'Fixture',
    branchName: 'ralph/fixture',
    checks: ['npm test'],
    ...fields,
  });
}

/** Write through a temp file and rename, as the engine does (the case fs.watch misses on some platforms). */
export function writeAtomic(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

export function writePlan(repo: string, prd: Prd, file = 'ralph/prd.json'): void {
  writeAtomic(path.join(repo, file), `${JSON.stringify(prd, null, 2)}\n`);
}

/**
 * The plan on disk committed on its branch (default ralph/fixture, the fixture plan's), as a loop's runner leaves it:
 * what the commit a sealed record names holds, and what `status` and the dashboard match a record's stories against.
 */
export function commitPlan(repo: string, branch = 'ralph/fixture', file = 'ralph/prd.json'): string {
  if (git(repo, 'branch', '--show-current') !== branch) git(repo, 'checkout', '-q', '-B', branch);
  git(repo, 'add', file);
  git(repo, 'commit', '-qm', 'plan');
  return git(repo, 'rev-parse', 'HEAD');
}

export interface LoopStateFixture {
  id: string;
  agent?: string;
  prd?: string;
  iteration?: number;
  maxIterations?: number;
  status?: string;
  pid?: number | null;
  startedAt?: string;
  updatedAt?: string;
  costUsd?: number | null;
  exitCode?: number | null;
  message?: string;
  /** A --parallel run's workers and merge queue. */
  parallel?: ParallelState;
  /** The plan's branch, as the runner records it. */
  branch?: string;
}

export function writeLoop(repo: string, state: LoopStateFixture): void {
  const full = {
    agent: 'claude',
    prd: 'ralph/prd.json',
    iteration: 1,
    maxIterations: 10,
    status: 'running',
    pid: process.pid,
    startedAt: new Date().toISOString(),
    updatedAt: new Date().toISOString(),
    costUsd: null,
    exitCode: null,
    ...state,
  };
  writeAtomic(path.join(repo, 'ralph/.runs', state.id, 'state.json'), `${JSON.stringify(full, null, 2)}\n`);
}

/** One line of ralph/.runs/<loop>/ledger.jsonl as src/engine/store/ledger.ts writes it (kind check, verdict or review). */
export interface LedgerLineFixture {
  time: string;
  loop: string;
  iteration: number;
  story: string;
  kind?: 'check' | 'verdict' | 'review';
  scope?: 'prd' | 'story' | 'setup';
  commit?: string;
  command: string | null;
  exitCode: number | null;
  signal?: string | null;
  timedOut?: boolean;
  durationMs?: number;
  outputSha256?: string | null;
  status?: 'verified' | 'unverified' | 'rejected';
  reason?: string;
  /** Review lines: the reviewer's answer, who gave it, the model. */
  verdict?: 'ship' | 'revise' | 'invalid';
  reviewer?: string;
  model?: string | null;
}

export function writeLedger(repo: string, loop: string, lines: LedgerLineFixture[]): void {
  const checkDefaults = {
    kind: 'check',
    scope: 'prd',
    signal: null,
    timedOut: false,
    outputSha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  };
  const text = lines
    .map((l) =>
      JSON.stringify({
        commit: 'a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d0',
        durationMs: 1200,
        ...(l.status ? { kind: 'verdict', outputSha256: null } : checkDefaults),
        ...l,
      }),
    )
    .join('\n');
  writeAtomic(path.join(repo, 'ralph/.runs', loop, 'ledger.jsonl'), `${text}\n`);
}

export function writeProgress(repo: string, text: string): void {
  writeAtomic(path.join(repo, 'ralph/progress.txt'), text);
}
