// progress.txt upkeep: the header of a fresh log, archiving the old plan when the branch changes, and
// compaction once the log outgrows what an agent should read every iteration.
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { atomicWriteFileSync } from '../../util/atomic.js';
import { readTextOrNull, readFileNoWait } from '../../util/read.js';

export const PROGRESS_LIMIT_BYTES = 64 * 1024;
// Sections that stay on top: lasting lessons, and the short intro of the session log that follows.
const PINNED_HEADING = /^##\s+(Codebase Patterns|Sessions)\s*$/im;

// Mirrors templates/ralph/progress.txt (the engine is bundled alone and cannot read the templates).
export function renderProgressHeader(now: Date, patterns: string | null = null): string {
  return [
    '# Progress log',
    `Started: ${now.toISOString()}`,
    '',
    '## Codebase Patterns',
    patterns ??
      [
        'Lasting lessons about this codebase that every session should know: how to run and test it,',
        'conventions, traps. Keep this section at the top and short; read it first, add to it when a',
        'learning applies beyond one story.',
      ].join('\n'),
    '',
    '## Sessions',
    'Each session appends one entry at the end of this file (date, story, what changed, files,',
    'learnings). Append only; do not rewrite earlier entries.',
    '---',
    '',
  ].join('\n');
}

export function dateStamp(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/** ralph/archive/YYYY-MM-DD-<branch without "ralph/">/ (slashes kept out of the folder name). */
export function planArchiveDir(ralphDir: string, oldBranch: string, now: Date): string {
  const name = oldBranch.replace(/^ralph\//, '').replace(/[^A-Za-z0-9._-]+/g, '-');
  return path.join(ralphDir, 'archive', `${dateStamp(now)}-${name}`);
}

export interface BranchArchiveInput {
  prdPath: string;
  progressPath: string;
  oldBranch: string;
  /** The old plan (see readOldPlan in run/branch.ts), or null when none was found. */
  oldPrd: string | null;
  /** progress.txt as the user left it when the runner started (before any checkout), or null when missing. */
  oldProgress: string | null;
  now: Date;
  /** Plan texts that count as the same plan (the caller compares JSON, ignoring formatting). */
  samePlan(a: string, b: string): boolean;
}

export interface BranchArchiveResult {
  /** The archive folder written, or null when there was nothing new to keep. */
  dir: string | null;
  /** Files and folders this call created in the archive, so a failed start can remove them again. */
  created: string[];
  /** True when progress.txt was rewritten. */
  progressWritten: boolean;
}

/**
 * Copies the old plan and log into the archive, unless a folder for the old branch already holds the same copy
 * (the ralph skill archives before it overwrites the plan), and starts a fresh log that keeps the Codebase
 * Patterns (they describe the codebase, not the plan).
 */
export function applyBranchArchive(input: BranchArchiveInput): BranchArchiveResult {
  const ralphDir = path.dirname(input.prdPath);
  const planName = path.basename(input.prdPath);
  const progress = input.oldProgress ?? '';
  const copies = readArchivedCopies(ralphDir, input.oldBranch, planName);
  const keepPlan = input.oldPrd !== null && !copies.plans.some((p) => input.samePlan(p, input.oldPrd!));
  const keepProgress = hasEntries(progress) && !copies.progress.some((p) => p.trimEnd() === progress.trimEnd());
  const created: string[] = [];
  let dir: string | null = null;
  if (keepPlan || keepProgress) {
    dir = freeArchiveDir(ralphDir, input.oldBranch, input.now, planName);
    created.push(...[path.dirname(dir), dir].filter((d) => !existsSync(d)));
    mkdirSync(dir, { recursive: true });
    const write = (file: string, text: string) => {
      created.push(file);
      atomicWriteFileSync(file, text);
    };
    if (keepPlan) write(path.join(dir, planName), input.oldPrd!);
    if (keepProgress) write(path.join(dir, 'progress.txt'), progress);
  }
  // A log without entries (fresh, or already reset by the ralph skill) is carried over as the user left it.
  const fresh = hasEntries(progress)
    ? renderProgressHeader(input.now, readPatterns(progress))
    : (input.oldProgress ?? renderProgressHeader(input.now));
  const current = existsSync(input.progressPath) ? readFileNoWait(input.progressPath).toString('utf8') : null;
  if (current !== fresh) atomicWriteFileSync(input.progressPath, fresh);
  return { dir, created, progressWritten: current !== fresh };
}

function freeArchiveDir(ralphDir: string, oldBranch: string, now: Date, planName: string): string {
  const base = planArchiveDir(ralphDir, oldBranch, now);
  let dir = base;
  for (let n = 2; existsSync(path.join(dir, 'progress.txt')) || existsSync(path.join(dir, planName)); n++)
    dir = `${base}-${n}`;
  return dir;
}

/** The plan and log copies already in archive folders of `oldBranch` (any date, any -N suffix). */
function readArchivedCopies(
  ralphDir: string,
  oldBranch: string,
  planName: string,
): { plans: string[]; progress: string[] } {
  const root = path.join(ralphDir, 'archive');
  const name = path.basename(planArchiveDir(ralphDir, oldBranch, new Date(0))).slice('1970-01-01-'.length);
  const pattern = new RegExp(`^\\d{4}-\\d{2}-\\d{2}-${name.replace(/[.]/g, '\\.')}(-\\d+)?$`);
  const out = { plans: [] as string[], progress: [] as string[] };
  let entries: string[] = [];
  try {
    entries = readdirSync(root).filter((e) => pattern.test(e));
  } catch {
    return out;
  }
  for (const e of entries) {
    const plan = readTextOrNull(path.join(root, e, planName));
    const log = readTextOrNull(path.join(root, e, 'progress.txt'));
    if (plan !== null) out.plans.push(plan);
    if (log !== null) out.progress.push(log);
  }
  return out;
}

/** True when the log holds session entries beyond its preamble and pinned sections. */
export function hasEntries(text: string): boolean {
  return splitSections(text).some((s, i) => !isPinnedSection(s, i));
}

/** The body of `## Codebase Patterns` (without its heading), or null when there is none. */
export function readPatterns(text: string): string | null {
  const section = splitSections(text).find((s) => /^##\s+Codebase Patterns\b/i.test(s));
  return section ? section.replace(/^[^\n]*\n/, '').trimEnd() : null;
}

function isPinnedSection(s: string, i: number): boolean {
  return (i === 0 && !s.startsWith('## ')) || PINNED_HEADING.test(s.split('\n', 1)[0]);
}

/** Creates progress.txt with its header when missing; true when it wrote one. */
export function ensureProgressFile(progressPath: string, now: Date): boolean {
  if (existsSync(progressPath)) return false;
  atomicWriteFileSync(progressPath, renderProgressHeader(now));
  return true;
}

export interface CompactionPlan {
  kept: string;
  moved: string;
}

/**
 * Splits a log into its preamble, the `## Codebase Patterns` section and entries (each starting at a
 * `## ` heading). The preamble, the patterns and the newest entries that fit in half the limit stay;
 * older entries move out. Null when the log is within the limit or has nothing to move.
 */
export function planCompaction(text: string, limitBytes = PROGRESS_LIMIT_BYTES): CompactionPlan | null {
  if (Buffer.byteLength(text) <= limitBytes) return null;
  const sections = splitSections(text);
  const pinned = sections.filter(isPinnedSection);
  const entries = sections.filter((s, i) => !isPinnedSection(s, i));
  let budget = limitBytes / 2 - pinned.reduce((n, s) => n + Buffer.byteLength(s), 0);
  let firstKept = entries.length;
  while (firstKept > 0 && budget - Buffer.byteLength(entries[firstKept - 1]) >= 0) {
    budget -= Buffer.byteLength(entries[--firstKept]);
  }
  // Always keep the newest entry, even an oversized one: it is what the next agent needs most.
  if (firstKept === entries.length && entries.length > 0) firstKept--;
  if (firstKept === 0) return null;
  const moved = entries.slice(0, firstKept).join('');
  return { kept: [...pinned, ...entries.slice(firstKept)].join(''), moved };
}

function splitSections(text: string): string[] {
  const lines = text.split(/(?<=\n)/);
  const sections: string[] = [];
  let current = '';
  for (const line of lines) {
    if (line.startsWith('## ') && current) {
      sections.push(current);
      current = '';
    }
    current += line;
  }
  if (current) sections.push(current);
  return sections;
}

/**
 * Compacts progress.txt in place when over the limit; returns the archive file written, if any. `beforeWrite` is
 * given the archive file's path before anything is written (the runner refuses a linked folder on its way).
 */
export function applyCompaction(
  progressPath: string,
  now: Date,
  limitBytes = PROGRESS_LIMIT_BYTES,
  beforeWrite: (file: string) => void = () => {},
): string | null {
  if (!existsSync(progressPath)) return null;
  const plan = planCompaction(readFileNoWait(progressPath).toString('utf8'), limitBytes);
  if (!plan) return null;
  const dir = path.join(path.dirname(progressPath), 'archive');
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  const file = path.join(dir, `progress-${stamp}.txt`);
  beforeWrite(file);
  mkdirSync(dir, { recursive: true });
  atomicWriteFileSync(
    file,
    `# progress.txt entries moved out of ${path.basename(progressPath)} on ${now.toISOString()}\n\n${plan.moved}`,
  );
  atomicWriteFileSync(progressPath, plan.kept);
  return file;
}
