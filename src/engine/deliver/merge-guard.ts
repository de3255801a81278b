// --deliver pr-merge's refusal from an anchor the agent cannot move. The loop's own record of its pins is a ref in the
// repository the agent writes (`git update-ref` moves it), so before a merge the runner asks GitHub for the branch's
// merge base with its base and its changed files, takes the plan as committed AT that merge base (content-addressed:
// the sha names exactly one tree), computes the pins from it with its own pin logic, and refuses when the branch
// changed any of them, or changed the repository's CI configuration (which would decide what "CI passed" means).
import type { Prd } from '../../prd/types.js';
import type { RunContext } from '../types.js';
import { isAncestor } from '../git/head.js';
import { readFileAt } from '../git/read.js';
import { relPath } from '../../util/repo-path.js';
import { GitHubError } from './github.js';
import { ciConfigFiles, readBranchChanges } from './compare.js';
import { readDefaultBranch, readPullFacts } from './pull-request.js';
import { readPins } from '../verify/pin-capture.js';
import { readPinDrift } from '../verify/pin-drift.js';
import type { PullDelivered } from './deliver-pr.js';

export interface Refusal {
  why: string;
  hint: string;
}

const list = (items: string[]) =>
  items.slice(0, 5).join(', ') + (items.length > 5 ? `, and ${items.length - 5} more` : '');

/**
 * Null when the pull request on GitHub is the loop's: into the loop's base (the plan's baseBranch when the loop
 * started, else the default branch), from this repository, ending at the verified commit. An open pull request the
 * loop found and reused may be into another branch (`release`), from a fork, or moved. Never throws.
 */
export async function readPullRefusal(run: RunContext, pull: PullDelivered, commit: string): Promise<Refusal | null> {
  const hint = 'look at the pull request on GitHub, then merge it by hand';
  try {
    const facts = await readPullFacts(pull.client, pull.repo, pull.done.number);
    const base = run.base || (await readDefaultBranch(pull.client, pull.repo));
    const own = `${pull.repo.owner}/${pull.repo.repo}`;
    if (facts.base !== base)
      return {
        why: `it is into ${facts.base || 'an unnamed branch'}, not the loop's base ${base}`,
        hint: `change its base to ${base} on GitHub, or ${hint}`,
      };
    if (facts.headRepo.toLowerCase() !== own.toLowerCase())
      return { why: `its head is in ${facts.headRepo || 'an unnamed repository'}, not ${own}`, hint };
    if (facts.headSha !== commit)
      return {
        why: `its head on GitHub is ${facts.headSha.slice(0, 7) || 'unknown'}, not the commit the final gate verified (${commit.slice(0, 7)})`,
        hint,
      };
    return null;
  } catch (err) {
    return { why: `cannot read the pull request from GitHub: ${(err as Error).message}`, hint };
  }
}

/** Null when GitHub's view of the branch lets it merge; else why not. Never throws. */
export async function readServerRefusal(run: RunContext, pull: PullDelivered, commit: string): Promise<Refusal | null> {
  const review = 'review the pull request, then merge it by hand';
  try {
    const changes = await readBranchChanges(pull.client, pull.repo, pull.done.base, commit);
    const ci = ciConfigFiles(changes.files);
    if (ci.length)
      return {
        why: `the branch changes the repository's CI configuration (${list(ci)}), which decides what "checks passed" means`,
        hint: review,
      };
    if (!changes.complete)
      return {
        why: 'GitHub lists only the first 300 changed files of the branch, so the runner cannot tell whether it changed pinned tests',
        hint: review,
      };
    const top = run.paths.repoRoot;
    if (!(await isAncestor(top, changes.mergeBase, commit)))
      return {
        why: `GitHub's merge base ${changes.mergeBase.slice(0, 7)} with ${pull.done.base} is not in the verified commit's history here`,
        hint: `fetch ${pull.done.base}, then ${review}`,
      };
    const drift = await readBaseDrift(top, run.paths.prd, changes.mergeBase, commit, changes.files);
    if (drift === null)
      return {
        why: `the plan is not committed on ${pull.done.base} at the merge base ${changes.mergeBase.slice(0, 7)}, so nothing there says which tests are pinned`,
        hint: `commit the plan to ${pull.done.base} before the loop, or ${review}`,
      };
    const why = `the branch changed tests pinned by the plan on ${pull.done.base} (merge base ${changes.mergeBase.slice(0, 7)}): ${list(drift)}; the checks ran with the base's versions`;
    if (drift.length && run.options.acceptPinChanges)
      run.emit({ type: 'warn', message: `--accept-pin-changes: merging although ${why}` });
    else if (drift.length)
      return {
        why,
        hint: `the pull request lists them: ${review} (or, once reviewed, resume with --deliver pr-merge --accept-pin-changes)`,
      };
    return null;
  } catch (err) {
    const said = err instanceof GitHubError || err instanceof Error ? err.message : String(err);
    return {
      why: `cannot tell from GitHub what the branch changed since ${pull.done.base || 'its base'}: ${said}`,
      hint: review,
    };
  }
}

// The pins of the plan as committed at `base`, and what `commit` changed of them: locally (scripts, config sections,
// added files that change how checks run) and in GitHub's own list of changed files. Null: no plan at `base`.
async function readBaseDrift(
  top: string,
  prdPath: string,
  base: string,
  commit: string,
  changed: readonly string[],
): Promise<string[] | null> {
  const text = await readFileAt(top, base, relPath(top, prdPath));
  let prd: Prd;
  try {
    prd = JSON.parse(text ?? '') as Prd;
    if (!prd || !Array.isArray(prd.userStories)) return null;
  } catch {
    return null;
  }
  const pins = await readPins(top, base, prd);
  const drift = await readPinDrift(top, pins, commit);
  const pinned = new Set(pins.paths);
  for (const f of changed) if (pinned.has(f) && !drift.some((d) => d.endsWith(` ${f}`))) drift.push(`changed ${f}`);
  return drift;
}
