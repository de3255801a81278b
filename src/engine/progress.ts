// progress.txt upkeep: the header of a fresh log, archiving the old plan when the branch changes, and
// compaction once the log outgrows what an agent should read every iteration.
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { atomicWriteFileSync } from '../util/atomic.js';

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
  /** The old plan: prd.json on disk when it still names the old branch, else the copy on that branch in git, else null. */
  oldPrd: string | null;
  now: Date;
}

/**
 * Copies the old plan and log into the archive and starts a fresh log that keeps the Codebase Patterns
 * (they describe the codebase, not the plan). Returns the archive folder, or null when there was nothing
 * to keep (the ralph skill may have archived and reset the files already).
 */
export function applyBranchArchive(input: BranchArchiveInput): string | null {
  const progress = existsSync(input.progressPath) ? readFileSync(input.progressPath, 'utf8') : '';
  const keepProgress = hasEntries(progress);
  if (!keepProgress && input.oldPrd === null) return null;
  const base = planArchiveDir(path.dirname(input.prdPath), input.oldBranch, input.now);
  let dir = base;
  for (let n = 2; existsSync(path.join(dir, 'progress.txt')) || existsSync(path.join(dir, path.basename(input.prdPath))); n++) dir = `${base}-${n}`;
  mkdirSync(dir, { recursive: true });
  if (input.oldPrd !== null) atomicWriteFileSync(path.join(dir, path.basename(input.prdPath)), input.oldPrd);
  if (keepProgress) {
    copyFileSync(input.progressPath, path.join(dir, 'progress.txt'));
    atomicWriteFileSync(input.progressPath, renderProgressHeader(input.now, readPatterns(progress)));
  }
  return dir;
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

/** Compacts progress.txt in place when over the limit; returns the archive file written, if any. */
export function applyCompaction(progressPath: string, now: Date, limitBytes = PROGRESS_LIMIT_BYTES): string | null {
  if (!existsSync(progressPath)) return null;
  const plan = planCompaction(readFileSync(progressPath, 'utf8'), limitBytes);
  if (!plan) return null;
  const dir = path.join(path.dirname(progressPath), 'archive');
  mkdirSync(dir, { recursive: true });
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  const file = path.join(dir, `progress-${stamp}.txt`);
  atomicWriteFileSync(file, `# progress.txt entries moved out of ${path.basename(progressPath)} on ${now.toISOString()}\n\n${plan.moved}`);
  atomicWriteFileSync(progressPath, plan.kept);
  return file;
}
