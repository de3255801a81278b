// Temp repositories laid out like an installed ralphkit, for the verification tests.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { gitdir, git, writeFiles } from './repo.js';
import type { Prd, Story } from '../../src/prd/types.js';
import type { VerifyInput } from '../../src/engine/verify/types.js';
import { parseLedger, type LedgerLine } from '../../src/engine/store/ledger.js';
import { plan as basePlan, story as baseStory } from './plan.js';

/** A verification test's story (test/support/plan.ts) with a criterion of its own and empty notes. */
export const story = (id: string, extra: Partial<Story> = {}): Story =>
  baseStory(id, { acceptanceCriteria: [`${id} works`], notes: '', ...extra });

export const plan = (stories: Story[], extra: Omit<Partial<Prd>, 'userStories'> = {}): Prd =>
  basePlan(stories, { project: 'Demo', branchName: 'ralph/demo', ...extra });

export interface VerifyRepo {
  dir: string;
  prdPath: string;
  progressPath: string;
  ledgerPath: string;
  logs: string[];
  /** The prd.json text as committed: what the runner saw before the agent ran. */
  before: string;
  input(extra?: Partial<VerifyInput>): VerifyInput;
}

/** A committed repository with ralph/prd.json, ralph/progress.txt and ralph/.gitignore (ignoring .runs/). */
export function verifyRepo(prd: Prd, files: Record<string, string> = {}): VerifyRepo {
  const before = JSON.stringify(prd, null, 2) + '\n';
  const dir = gitdir({
    'ralph/prd.json': before,
    'ralph/progress.txt': '# Ralph Progress Log\n\n## Codebase Patterns\n\n---\n',
    'ralph/.gitignore': '.runs/\n',
    ...files,
  });
  const logs: string[] = [];
  const repo: VerifyRepo = {
    dir,
    prdPath: path.join(dir, 'ralph/prd.json'),
    progressPath: path.join(dir, 'ralph/progress.txt'),
    ledgerPath: path.join(dir, 'ralph/.runs/L1/ledger.jsonl'),
    logs,
    before,
    input: (extra = {}) => ({
      repoRoot: dir,
      prdPath: repo.prdPath,
      progressPath: repo.progressPath,
      ledgerPath: repo.ledgerPath,
      loopId: 'L1',
      iteration: 1,
      prdBefore: before,
      checkTimeoutMs: 20_000,
      log: (level, message) => logs.push(`${level}: ${message}`),
      ...extra,
    }),
  };
  return repo;
}

/** Plays the agent: edits prd.json in place. */
export function editPrd(r: VerifyRepo, edit: (p: Prd) => void): void {
  const p = JSON.parse(readFileSync(r.prdPath, 'utf8')) as Prd;
  edit(p);
  writeFileSync(r.prdPath, JSON.stringify(p, null, 2) + '\n');
}

export function claim(r: VerifyRepo, ...ids: string[]): void {
  editPrd(r, (p) => p.userStories.filter((s) => ids.includes(s.id)).forEach((s) => (s.passes = true)));
}

/** Plays the agent: writes files and commits everything, as the prompt tells it to. */
export function commitAll(dir: string, files: Record<string, string | Buffer>, message = 'feat: work'): string {
  writeFiles(dir, files);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '--allow-empty', '-m', message);
  return git(dir, 'rev-parse', 'HEAD');
}

export function readPrd(r: VerifyRepo): Prd {
  return JSON.parse(readFileSync(r.prdPath, 'utf8')) as Prd;
}

export function readLedgerLines(r: VerifyRepo): LedgerLine[] {
  try {
    return parseLedger(readFileSync(r.ledgerPath, 'utf8'));
  } catch {
    return [];
  }
}

/** `git status --porcelain` lines (not trimmed: the leading column matters). */
export function status(dir: string): string {
  return execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], {
    cwd: dir,
    encoding: 'utf8',
  }).replace(/\n$/, '');
}
