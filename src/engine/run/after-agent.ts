// After each agent run, before its claims are judged: what it left running outside its process group is
// stopped (the runner's files it changed are put back by verify/trusted-files.ts), and git is inspected: back to the
// loop's branch if it left it, a stop if it rewrote verified history, warnings for commits elsewhere or to the prompt.
import { appendOwnFileSync } from '../../util/atomic.js';
import type { RunContext, AgentGitOutcome } from '../types.js';
import { headSha, isAncestor, readCommitsSince, switchToBranch, type RefsSnapshot } from '../git/head.js';
import { readChangedPaths, readDirtyPaths } from '../git/read.js';
import { renderOffBranchBlock, renderOffBranchReason } from '../verify/report.js';
import { readOwnTextOrNull } from '../../util/read.js';
import { stopMarkedProcesses } from '../agents/leftovers.js';
import { guardWrite, WorkProtected } from '../errors.js';
import { relToTop } from '../../util/repo-path.js';
import { recordsRoot } from '../store/layout.js';
import { readAllStates } from '../store/state-file.js';
import { shellQuote } from '../../util/shell-quote.js';

/**
 * SPEC §6: nothing of the agent outlives its iteration. Its process group is already gone (agents/process.ts); this
 * finds the processes that left the group (setsid, double forks) by the mark in their environment.
 */
export async function stopLeftovers(run: RunContext, token: string, iteration: number): Promise<void> {
  const { stopped } = await stopMarkedProcesses(token);
  if (!stopped.length) return;
  const list = stopped
    .slice(0, 5)
    .map((p) => `${p.pid} ${p.command}`)
    .join('; ');
  run.emit({
    type: 'warn',
    iteration,
    message: `stopped ${stopped.length} process${stopped.length === 1 ? '' : 'es'} the agent left running outside its process group (${list})`,
  });
}

/**
 * Git after an agent run, before its claims are judged (docs/engine.md): back to the loop's branch if the agent left
 * it, a stop if it rewrote the history the loop had verified, a warning if its commits changed the prompt.
 */
export async function inspectAgentGit(
  run: RunContext,
  topLevel: string,
  iteration: number,
  headBefore: string | null,
  tips: string[],
  refs: RefsSnapshot,
): Promise<AgentGitOutcome> {
  const offBranch = await returnToBranch(run, topLevel, iteration, tips, refs);
  // No branch points anywhere new (but the loop's own): no commit can be on another branch.
  const known = new Set(tips);
  if (!offBranch && tips.length && refs.tips.some((t) => t !== refs.head && !known.has(t)))
    await warnCommitsElsewhere(run, iteration, tips);
  // Switching back moved HEAD; otherwise it is where the agent left it.
  const headAfter = offBranch ? await headSha(run.paths.repoRoot) : refs.head;
  await refuseRewrittenHistory(run, iteration, headBefore, headAfter);
  await warnPromptCommits(run, topLevel, iteration, headBefore, headAfter);
  return { headAfter, ...(offBranch ? { offBranch } : {}) };
}

/**
 * An agent that checks out another branch would get its commits verified and accepted there, off the loop's
 * branch. The runner switches back (never moving or deleting those commits) and rejects the iteration's claims,
 * reading them from the plan as the agent left it. A tree git cannot switch over safely stops the loop instead.
 */
async function returnToBranch(
  run: RunContext,
  topLevel: string,
  iteration: number,
  tips: string[],
  refs: RefsSnapshot,
): Promise<AgentGitOutcome['offBranch']> {
  const { repoRoot, prd, progress } = run.paths;
  const now = refs.branch;
  if (now === run.branch) return undefined;
  const head = refs.head;
  const where = now ?? `a detached HEAD (${head?.slice(0, 7) ?? 'no commit'})`;
  const commits = head ? await readCommitsSince(repoRoot, head, tips) : [];
  const inspect = now
    ? `git log ${shellQuote(run.branch)}..${shellQuote(now)}`
    : `git log ${head}, and keep them with: git branch <name> ${head}`;
  const made = commits.length
    ? `, and made ${commits.length} commit${commits.length === 1 ? '' : 's'} there: ${commits.join('; ')}`
    : ', and made no commit there';
  run.emit({
    type: 'warn',
    iteration,
    message: `the agent left the loop's branch: it switched from ${run.branch} to ${where}${made}`,
  });
  const prdAfter = readOwnTextOrNull(prd) ?? '';
  const dirty = (await readDirtyPaths(topLevel)).filter((p) => !/(^|\/)\.runs(\/|$)/.test(p));
  const stuck = (why: string) =>
    new WorkProtected(
      `iteration ${iteration}: the agent left ${run.branch} for ${where} and the runner cannot switch back: ${why}`,
      `look at the work (git status; ${inspect}), commit or stash it, then git checkout ${shellQuote(run.branch)} and continue with: ./ralph/ralph.sh --resume-last`,
    );
  if (dirty.length) throw stuck(`the working tree has uncommitted changes (${dirty.slice(0, 10).join(', ')})`);
  const r = await switchToBranch(repoRoot, run.branch);
  if (r.code !== 0) throw stuck(r.stderr.trim() || `git checkout exited ${r.code}`);
  run.emit({
    type: 'warn',
    iteration,
    message: `switched back to ${run.branch} and rejected this iteration's claims; the commits on ${where} were left as they are: inspect them with ${inspect}`,
  });
  const block = renderOffBranchBlock({ time: new Date(), iteration, branch: run.branch, where, commits });
  guardWrite(
    progress,
    repoRoot,
    () => appendOwnFileSync(progress, block),
    'the note about the other branch could not be written',
  );
  return { prdAfter, reason: renderOffBranchReason(run.branch, where) };
}

/**
 * A reset or rebase that drops the commit the iteration started from may delete verified work, and the ledger would
 * then vouch for code that is gone. The runner never rewrites history back itself: it stops and says how.
 */
async function refuseRewrittenHistory(
  run: RunContext,
  iteration: number,
  headBefore: string | null,
  headAfter: string | null,
): Promise<void> {
  if (headBefore === null || headAfter === headBefore) return;
  if (headAfter !== null && (await isAncestor(run.paths.repoRoot, headBefore, headAfter))) return;
  const old = headBefore.slice(0, 7);
  throw new WorkProtected(
    `iteration ${iteration}: the agent rewrote the history of ${run.branch}: ${old} (HEAD before it ran) is no longer in it (HEAD is now ${headAfter?.slice(0, 7) ?? 'gone'}), so commits this loop verified may be gone; the loop stops rather than build on that`,
    `compare: git log --oneline ${headAfter ? `${headAfter.slice(0, 7)}...${old}` : old} (or git reflog); to undo the rewrite: git reset --hard ${headBefore} (drops uncommitted changes); then continue with: ./ralph/ralph.sh --resume-last`,
  );
}

/** An agent that committed on another branch and came back: nothing of it is on the loop's branch, but say so. */
async function warnCommitsElsewhere(run: RunContext, iteration: number, tips: string[]): Promise<void> {
  // A --parallel worker's siblings (the other workers' story branches, the plan branch the queue merges onto) move
  // while it runs: their commits are the run's, not this agent's.
  const exclude = [...(run.siblingBranches ?? []), ...otherLoopBranches(run)].map((b) => `--exclude=${b}`);
  const commits = await readCommitsSince(
    run.paths.repoRoot,
    [...exclude, '--branches'],
    [...tips, `refs/heads/${run.branch}`],
  );
  if (!commits.length) return;
  run.emit({
    type: 'warn',
    iteration,
    message: `the agent committed on other branches than ${run.branch} (they are not this loop's work; a branch of yours it moved is put back): ${commits.join('; ')}; find them with: git log --branches --not ${shellQuote(run.branch)}`,
  });
}

/**
 * The branches other worktree loops of the repository work on (and their story branches): their commits are theirs.
 * Not only the running ones: a loop that finished while this agent ran moved its branch meanwhile.
 */
export function otherLoopBranches(run: RunContext): string[] {
  const main = recordsRoot(run.paths.repoRoot);
  const loops = readAllStates(main).filter((s) => s.id !== run.id);
  return loops.flatMap((s) => {
    const branch = s.worktree?.branch;
    return branch ? [branch, `${branch}--*`] : [];
  });
}

async function warnPromptCommits(
  run: RunContext,
  topLevel: string,
  iteration: number,
  headBefore: string | null,
  headAfter: string | null,
): Promise<void> {
  const rel = relToTop(topLevel, run.paths.prompt);
  if (!headBefore || !headAfter || headBefore === headAfter || rel.startsWith('../')) return;
  const changed = await readChangedPaths(topLevel, headBefore, headAfter).catch(() => [] as string[]);
  if (!changed.includes(rel)) return;
  run.emit({
    type: 'warn',
    iteration,
    message: `the agent's commits changed ${rel}, the instructions every iteration gets (such commits alone are not progress); review: git diff ${headBefore.slice(0, 7)} ${headAfter.slice(0, 7)} -- ${shellQuote(rel)}`,
  });
}
