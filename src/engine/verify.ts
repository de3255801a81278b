// SPEC §6: the agent does not mark its own homework. After each agent run the loop calls verifyIteration:
// edits to prd.json beyond passes/notes are undone, and every story newly flipped to `passes: true` is a
// claim that must survive a clean-tree check and the plan's own check commands before it counts.
import { appendFileSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { Prd, Story } from '../prd/types.js';
import { atomicWriteFileSync } from '../util/atomic.js';
import { LoopExit, LOOP_EXIT, type StoryVerdict, type VerifyInput, type VerifyResult } from './contracts.js';
import { planPrdRepair } from './prd-diff.js';
import { commitRunnerFiles, readDirtyPaths, readHead, readTopLevel } from './verify-git.js';
import { CheckSession } from './verify-session.js';
import { applyRunnerNote, hasRunnerNote, renderCheckFailure, renderRejectionBlock, renderRestoreBlock, renderUncommitted } from './verify-report.js';
import type { CheckResult } from './checks.js';

export interface VerifyOutcome extends VerifyResult {
  /**
   * The commit the runner made of its own prd.json/progress.txt edits (`chore(ralph): ...`), or null.
   * It is bookkeeping, not the agent's progress: the no-progress counter must not count it.
   */
  runnerCommit: string | null;
}

/** VerifyInput plus the loop's abort signal, so Ctrl-C stops a running check (it has its own process group). */
export type VerifyOptions = VerifyInput & { signal?: AbortSignal };

interface Judgement {
  verdict: StoryVerdict;
  block?: string;
}

export async function verifyIteration(input: VerifyOptions): Promise<VerifyOutcome> {
  const now = input.now ?? (() => new Date());
  const top = input.topLevel ?? realpathSync(await readTopLevel(input.repoRoot));
  const plan = planRepair(input);
  for (const r of plan.restored) input.log('warn', `prd.json: ${r}`);

  const own = ownPaths(top, input);
  const head = plan.claims.length ? (input.headAfterAgent !== undefined ? input.headAfterAgent : await readHead(top)) : null;
  const session = new CheckSession(input, top, head, now);
  const dirty = plan.claims.length ? (await readDirtyPaths(top)).filter((p) => !isOwn(p, own)) : [];
  const judged: Judgement[] = [];
  try {
    for (const id of plan.claims) judged.push(await judgeClaim(session, plan.prd, id, dirty, input, now));
  } finally {
    await session.close();
  }

  const edited = applyVerdicts(plan.prd, judged.map((j) => j.verdict));
  if (plan.changed || edited) writePrd(input, plan.prd, plan.unusable);
  const blocks = judged.flatMap((j) => (j.block ? [j.block] : []));
  if (plan.restored.length) blocks.push(renderRestoreBlock(now(), input.iteration, plan.restored));
  if (blocks.length) appendFileSync(input.progressPath, blocks.join(''));

  // One status after the runner's own writes serves both the side-effect warning (it skips the runner's files)
  // and the commit of those files.
  const after = plan.claims.length && !input.inWorktree ? await readDirtyPaths(top) : undefined;
  if (after) warnCheckSideEffects(after, own, dirty, input);
  const runnerCommit = await commitOwnFiles(top, own.files, commitMessage(judged, plan.restored.length > 0, input.iteration), input, after);
  if (runnerCommit) input.log('info', `committed the runner's own edits to ${own.files.join(' and ')} as ${runnerCommit.slice(0, 7)}`);
  const verdicts = judged.map((j) => j.verdict);
  return { verdicts, restored: plan.restored, prd: plan.prd, allPass: plan.prd.userStories.every((s) => s.passes === true), runnerCommit };
}

function planRepair(input: VerifyInput): ReturnType<typeof planPrdRepair> {
  try {
    JSON.parse(input.prdBefore);
  } catch (err) {
    // Someone other than the agent broke the plan between iterations: there is nothing sound to restore from.
    throw new LoopExit(LOOP_EXIT.refused, `${input.prdPath} was not valid JSON before iteration ${input.iteration}: ${(err as Error).message}`, 'fix the plan (npx ralphkit validate), then continue with --resume-last');
  }
  return planPrdRepair(input.prdBefore, readText(input.prdPath));
}

async function judgeClaim(s: CheckSession, prd: Prd, id: string, dirty: string[], input: VerifyOptions, now: () => Date): Promise<Judgement> {
  const story = prd.userStories.find((x) => x.id === id)!;
  const started = Date.now();
  const reject = (reason: string, check?: CheckResult): Judgement => {
    s.record({ ...s.base(id), kind: 'verdict', command: null, exitCode: null, status: 'rejected', reason, durationMs: Date.now() - started, outputSha256: null });
    input.log('warn', `${id} rejected: ${reason}`);
    const block = renderRejectionBlock({ time: now(), iteration: input.iteration, storyId: id, title: story.title, commit: s.commit, reason, check });
    return { verdict: { id, status: 'rejected', reason }, block };
  };
  if (dirty.length) return reject(renderUncommitted(dirty));
  const checks: Array<['prd' | 'story', string]> = [...(prd.checks ?? []).map((c): ['prd', string] => ['prd', c]), ...(story.checks ?? []).map((c): ['story', string] => ['story', c])];
  if (!checks.length) {
    const reason = 'no checks apply to this story (neither the plan\'s nor its own); accepted on the agent\'s word';
    s.record({ ...s.base(id), kind: 'verdict', command: null, exitCode: null, status: 'unverified', reason, durationMs: 0, outputSha256: null });
    input.log('warn', `${id} unverified: ${reason}`);
    return { verdict: { id, status: 'unverified', reason } };
  }
  let where: Awaited<ReturnType<CheckSession['prepare']>>;
  try {
    where = await s.prepare(id, prd.setup);
  } catch (err) {
    return reject(`could not prepare a worktree to verify in: ${(err as Error).message}`);
  }
  if ('failed' in where) return reject(renderCheckFailure(where.failed, input.checkTimeoutMs, 'setup'), where.failed);
  for (const [scope, command] of checks) {
    const r = await s.run(id, scope, command, where.cwd);
    if (!r.ok) return reject(renderCheckFailure(r, input.checkTimeoutMs), r);
  }
  s.record({ ...s.base(id), kind: 'verdict', command: null, exitCode: null, status: 'verified', durationMs: Date.now() - started, outputSha256: null });
  input.log('info', `${id} verified: ${checks.length} check${checks.length === 1 ? '' : 's'} passed at ${s.commit?.slice(0, 7) ?? '(no commit)'}`);
  return { verdict: { id, status: 'verified' } };
}

/** Undoes rejected claims and clears stale runner notes; true when the plan changed. */
function applyVerdicts(prd: Prd, verdicts: StoryVerdict[]): boolean {
  let edited = false;
  for (const v of verdicts) {
    const story = prd.userStories.find((x) => x.id === v.id) as Story;
    if (v.status === 'rejected') {
      story.passes = false;
      story.notes = applyRunnerNote(story.notes, `rejected: ${v.reason}`);
      edited = true;
    } else if (hasRunnerNote(story.notes)) {
      story.notes = applyRunnerNote(story.notes, null);
      edited = true;
    }
  }
  return edited;
}

function writePrd(input: VerifyInput, prd: Prd, verbatim: boolean): void {
  // An unusable file is replaced by the exact previous text, formatting and all.
  atomicWriteFileSync(input.prdPath, verbatim ? input.prdBefore : JSON.stringify(prd, null, 2) + '\n');
}

interface OwnPaths {
  /** prd.json and progress.txt relative to the top level: the agent edits them, the runner commits them. */
  files: string[];
  /** Runtime folders (this loop's .runs/<id>/ and .runs/ itself) that are never the agent's work. */
  dirs: string[];
}

function ownPaths(top: string, input: VerifyInput): OwnPaths {
  const rel = (p: string): string | null => {
    const r = path.relative(top, resolveReal(p)).split(path.sep).join('/');
    return r && !r.startsWith('../') && r !== '..' && !path.isAbsolute(r) ? r : null;
  };
  const files = [input.prdPath, input.progressPath].map(rel).filter((p): p is string => p !== null);
  const runDir = path.dirname(input.ledgerPath);
  const dirs = [runDir, ...(path.basename(path.dirname(runDir)) === '.runs' ? [path.dirname(runDir)] : [])].map(rel).filter((p): p is string => p !== null);
  return { files, dirs };
}

function isOwn(p: string, own: OwnPaths): boolean {
  return own.files.includes(p) || own.dirs.some((d) => p === d || p.startsWith(d + '/'));
}

/** Checks that write into the tree (a formatter, build output nobody ignored) would be blamed on the next claim. */
function warnCheckSideEffects(after: string[], own: OwnPaths, before: string[], input: VerifyInput): void {
  const added = after.filter((p) => !isOwn(p, own) && !before.includes(p));
  if (added.length) input.log('warn', `the checks changed files in the working tree (${added.slice(0, 10).join(', ')}); add them to .gitignore or the next claim will be rejected as uncommitted work`);
}

/** A failed commit (a merge in progress, a locked index) must not lose the verdicts: warn and go on. */
async function commitOwnFiles(top: string, files: string[], message: string, input: VerifyInput, dirty?: string[]): Promise<string | null> {
  try {
    return await commitRunnerFiles(top, files, message, dirty);
  } catch (err) {
    input.log('warn', `could not commit the runner's edits to ${files.join(' and ')}: ${(err as Error).message}`);
    return null;
  }
}

function commitMessage(judged: Judgement[], restored: boolean, iteration: number): string {
  const rejected = judged.filter((j) => j.verdict.status === 'rejected').map((j) => `${j.verdict.id} (${j.verdict.reason?.startsWith('uncommitted') ? 'uncommitted work' : 'check failed'})`);
  const parts = [...(rejected.length ? [`reject ${rejected.join(', ')}`] : []), ...(restored ? ['restore prd.json'] : [])];
  return `chore(ralph): ${parts.length ? parts.join('; ') : `record iteration ${iteration}`}`;
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** realpath of a file that may not exist yet: resolve its folder instead. */
function resolveReal(p: string): string {
  const abs = path.resolve(p);
  try {
    return realpathSync(abs);
  } catch {
    try {
      return path.join(realpathSync(path.dirname(abs)), path.basename(abs));
    } catch {
      return abs;
    }
  }
}

// The loop warns with this at start (SPEC §6: a plan without checks runs on the agent's word).
export { renderUncheckedWarning } from './verify-report.js';
