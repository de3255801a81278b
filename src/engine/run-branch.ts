// Before the first iteration: archive the previous run when branchName changed, make sure progress.txt
// exists, and put the work tree on the plan's branch.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Prd } from '../prd/types.js';
import { branchNameProblem } from '../prd/branch-name.js';
import { checkoutBranch, readFileOnBranch } from './git.js';
import { runsDir } from './runs.js';
import type { RunPaths } from './setup.js';
import { applyBranchArchive, ensureProgressFile } from './progress.js';
import { commitOwn, type LockedRun } from './run-deps.js';

/** Archive on branch change (before checkout, so the old files are what gets archived), then checkout. */
export async function prepareBranch(run: LockedRun): Promise<void> {
  const { paths, emit } = run;
  const lastFile = path.join(runsDir(paths.repoRoot), 'last-branch');
  const last = existsSync(lastFile) ? readFileSync(lastFile, 'utf8').trim() : '';
  const toCommit: string[] = [];
  if (last && last !== run.branch && !branchNameProblem(last)) {
    const dir = applyBranchArchive({ prdPath: paths.prd, progressPath: paths.progress, oldBranch: last, oldPrd: await readOldPlan(paths, last), now: new Date() });
    if (dir) {
      toCommit.push(...[path.basename(paths.prd), 'progress.txt'].map((f) => path.join(dir, f)).filter(existsSync), paths.progress);
      emit({ type: 'info', message: `branch changed from ${last}: archived the previous run to ${path.relative(paths.repoRoot, dir)}` });
    }
  }
  if (ensureProgressFile(paths.progress, new Date())) toCommit.push(paths.progress);
  emit({ type: 'info', message: await checkoutBranch(paths.repoRoot, run.branch, run.base) });
  mkdirSync(path.dirname(lastFile), { recursive: true });
  writeFileSync(lastFile, `${run.branch}\n`);
  if (toCommit.length) await commitOwn(run, toCommit, 'chore(ralph): archive the previous run and start a fresh progress.txt');
}

// By the time branchName changes, prd.json on disk is usually already the new plan; the old one is on the old branch.
// Each run leaves a copy of its plan in ralph/.runs/last-plan.json when it ends, for exactly this moment.
async function readOldPlan(paths: RunPaths, oldBranch: string): Promise<string | null> {
  for (const file of [paths.prd, path.join(runsDir(paths.repoRoot), 'last-plan.json')]) {
    try {
      const text = readFileSync(file, 'utf8');
      if ((JSON.parse(text) as Prd).branchName === oldBranch) return text;
    } catch {
      /* missing or unreadable: try the next source */
    }
  }
  return readFileOnBranch(paths.repoRoot, oldBranch, path.relative(paths.repoRoot, paths.prd));
}

