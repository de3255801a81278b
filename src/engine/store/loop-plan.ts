// The plan a loop worked on, and the sealed verdicts that belong to it, for `status` and the dashboard alike. A loop's
// stories are read where its work is: its working tree while that tree is on the loop's branch, else the branch tip
// through git, else the commit its verdict record names; never a tree that has moved on to another branch. A sealed
// verdict counts for a story only when the story at the record's commit is the same story (every field but `passes`
// and `notes`): a later plan that reuses the id is not what the record verified.
import path from 'node:path';
import type { LoopState } from './state-types.js';
import { gitSync } from '../git/program.js';
import { readTextOrNull } from '../../util/read.js';
import { readStoryStatus, type VerdictRecord } from './verdict-record.js';
import type { VerdictStatus } from './ledger.js';

export type StoryFlags = Array<{ id?: unknown; passes?: unknown; skip?: unknown }>;

/** Where a loop's stories were read: its tree (on the loop's branch), the branch tip, or the record's commit. */
export interface LoopPlan {
  stories: StoryFlags | null;
  /** The loop's branch, when known. */
  branch: string | null;
  from: 'tree' | 'branch' | 'record' | null;
}

const BRANCH = /^[A-Za-z0-9_][A-Za-z0-9._/-]*$/;

/** The loop's branch: as its state names it, else the plan's `branchName` at the loop's plan commit. */
export function readLoopBranch(repoRoot: string, s: LoopState, prd: string): string | null {
  const named = s.worktree?.branch ?? s.branch;
  if (typeof named === 'string') return BRANCH.test(named) ? named : null;
  if (typeof s.id !== 'string') return null;
  const branch = parsePlan(gitShow(repoRoot, `refs/ralphkit/loops/${s.id}/pins:${toGitPath(prd)}`))?.branchName;
  return typeof branch === 'string' && BRANCH.test(branch) ? branch : null;
}

export function readLoopPlan(repoRoot: string, s: LoopState, prd: string, record: VerdictRecord | null): LoopPlan {
  const tree = s.worktree && typeof s.worktree.path === 'string' ? s.worktree.path : repoRoot;
  const branch = readLoopBranch(repoRoot, s, prd);
  // A loop of an older runner with no branch to go by: its tree, as before.
  if (!branch) return { stories: readStories(readTextOrNull(path.resolve(tree, prd))), branch: null, from: 'tree' };
  if (currentBranch(tree) === branch) {
    const inTree = readStories(readTextOrNull(path.resolve(tree, prd)));
    if (inTree) return { stories: inTree, branch, from: 'tree' };
  }
  const atTip = readStories(gitShow(repoRoot, `refs/heads/${branch}:${toGitPath(prd)}`));
  if (atTip) return { stories: atTip, branch, from: 'branch' };
  const atRecord = record ? readStories(gitShow(repoRoot, `${record.commit}:${toGitPath(prd)}`)) : null;
  if (atRecord) return { stories: atRecord, branch, from: 'record' };
  // No branch and no record: a loop refused before it made its branch; the tree holds the plan it was started with.
  if (gitSync(repoRoot, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`]) === null) {
    return { stories: readStories(readTextOrNull(path.resolve(tree, prd))), branch, from: 'tree' };
  }
  return { stories: null, branch, from: null };
}

/**
 * The record's verdicts of the stories in `stories` that are the very stories it verified: the same definition at the
 * record's commit (`prd`, relative to the repository), `passes` and `notes` aside. Other ids are left out. None when
 * the loop's `branch` has moved on from the record's commit (a resumed run, or a commit of anyone's since): the record
 * verified that commit, not the work on the branch now, which the ledger reports.
 */
export function matchSealedStories(
  repoRoot: string,
  record: VerdictRecord | null,
  prd: string,
  stories: readonly unknown[],
  branch?: string | null,
): Record<string, VerdictStatus> {
  const out: Record<string, VerdictStatus> = Object.create(null);
  if (!record) return out;
  const tip =
    branch && BRANCH.test(branch)
      ? gitSync(repoRoot, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`])
      : null;
  if (tip !== null && tip.trim() !== record.commit) return out;
  const atRecord = parsePlan(gitShow(repoRoot, `${record.commit}:${toGitPath(prd)}`));
  if (!atRecord || !Array.isArray(atRecord.userStories)) return out;
  const verified = new Map((atRecord.userStories as unknown[]).filter(isStory).map((s) => [s.id, renderDefinition(s)]));
  for (const story of stories.filter(isStory)) {
    const status = readStoryStatus(record.stories, story.id);
    if (status && verified.get(story.id) === renderDefinition(story)) out[story.id] = status;
  }
  return out;
}

/**
 * The newest loop of plan file `prd` (relative to the repository) on `branch` (the plan's `branchName`), or an
 * in-session loop on the branch `tree` is on (a Stop-hook loop works where the session is): the one a plan's cards
 * belong to.
 */
export function findPlanLoop(
  repoRoot: string,
  states: readonly LoopState[],
  prd: string,
  branch: unknown,
  tree: string = repoRoot,
): LoopState | null {
  const here = states.some((s) => s.inSession) ? currentBranch(tree) : null;
  const mine = states.filter((s) => {
    if (typeof s.prd !== 'string' || path.normalize(s.prd) !== path.normalize(prd)) return false;
    const own = readLoopBranch(repoRoot, s, s.prd);
    return own !== null && (own === branch || (s.inSession === true && own === here));
  });
  return mine.sort((a, b) => String(b.startedAt).localeCompare(String(a.startedAt)))[0] ?? null;
}

function isStory(s: unknown): s is { id: string } & Record<string, unknown> {
  return !!s && typeof s === 'object' && typeof (s as { id?: unknown }).id === 'string';
}

/** A story's definition as one string: its fields but `passes` and `notes`, keys sorted at every level. */
function renderDefinition(story: Record<string, unknown>): string {
  const { passes: _p, notes: _n, ...rest } = story;
  const sortKeys = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sortKeys);
    if (!v || typeof v !== 'object') return v;
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, x]) => [k, sortKeys(x)]),
    );
  };
  return JSON.stringify(sortKeys(rest));
}

function readStories(text: string | null): StoryFlags | null {
  const prd = parsePlan(text);
  return prd && Array.isArray(prd.userStories) ? (prd.userStories as StoryFlags) : null;
}

function parsePlan(text: string | null): Record<string, unknown> | null {
  if (text === null) return null;
  try {
    const prd = JSON.parse(text) as unknown;
    return prd && typeof prd === 'object' && !Array.isArray(prd) ? (prd as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function toGitPath(prd: string): string {
  return prd.split(path.sep).join('/');
}

function currentBranch(tree: string): string | null {
  const out = gitSync(tree, ['symbolic-ref', '-q', '--short', 'HEAD']);
  return out === null ? null : out.trim() || null;
}

function gitShow(repoRoot: string, spec: string): string | null {
  return gitSync(repoRoot, ['cat-file', 'blob', spec]);
}
