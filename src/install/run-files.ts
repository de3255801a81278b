// Shared by `install` and `skill add`: check paths, read disk, plan, settle conflicts, then apply (or not).
import { realpathSync } from 'node:fs';
import { RalphkitError, EXIT } from '../errors.js';
import { resolveCwdFolder } from '../cwd.js';
import { resolveAllInside } from './safety.js';
import { readManifest } from './manifest.js';
import { findNotExecutable, readDisk, removeStaleTempFiles } from './disk.js';
import { readLeftover, removeStaging } from './staging.js';
import { compareVersions } from './version-order.js';
import { conflictsOf, planInstall, planIsNoop } from './plan.js';
import { applyInstall } from './apply.js';
import { renderUnifiedDiff } from '../util/diff.js';
import { hashContent } from '../util/hash.js';
import {
  BACKUP_DIR,
  MANIFEST_PATH,
  type CiProvider,
  type ClaudeHookRecord,
  type IncomingFile,
  type InstallPlan,
  type PlanItem,
  type Resolution,
} from './types.js';
import { renderUpgradeHint } from '../util/invocation.js';
import type { SkillAgent } from '../skills/agent-names.js';

/** Answers a conflict at the prompt; only given when a person can answer (see util/prompt.ts). */
export type AskConflict = (item: PlanItem, diff: string) => Promise<Resolution | 'abort'>;

export interface FileRunOptions {
  cwd: string;
  files: readonly IncomingFile[];
  version: string;
  /** See PlanOptions.keepRecordedVersion. */
  keepRecordedVersion?: boolean;
  force?: boolean;
  dryRun?: boolean;
  diff?: boolean;
  ask?: AskConflict;
  now?: Date;
  pauseAfterWrites?: number;
  /** `install`: refuse to put back older files over a newer release's (see refuseDowngrade). */
  guardDowngrade?: boolean;
  /** See PlanOptions.claudeHook. */
  claudeHook?: ClaudeHookRecord | null;
  /** See PlanOptions.ci. */
  ci?: CiProvider | null;
  /** `install` with skills: the skill folders it wrote, recorded so a plain install keeps them (PlanOptions.agents). */
  recordAgents?: SkillAgent[];
}

export type RunStatus = 'written' | 'nothing-to-do' | 'dry-run' | 'conflicts' | 'aborted';

export interface FileRunResult {
  cwd: string;
  version: string;
  plan: InstallPlan;
  status: RunStatus;
  exitCode: number;
  written: string[];
  backups: { path: string; backup: string }[];
  /** Unified diffs by path, when asked for with `diff`. */
  diffs: Record<string, string>;
  warnings: string[];
}

export async function runFiles(options: FileRunOptions): Promise<FileRunResult> {
  // 1. Every path is checked for symlinks leading outside before anything is read or written.
  const root = resolveRoot(options.cwd);
  checkUniquePaths(options.files);
  const real = resolveAllInside(root, [...options.files.map((f) => f.path), MANIFEST_PATH]);

  // 2. Read the manifest and the files on disk; plan from hashes alone.
  const { manifest, warning } = readManifest(real.get(MANIFEST_PATH)!);
  const leftovers = options.dryRun ? [] : cleanLeftovers(root, real.values());
  const disk = readDisk(new Map(options.files.map((f) => [f.path, real.get(f.path)!])));
  const hashes = new Map([...disk].map(([p, d]) => [p, d?.sha256]));
  const planned = options.files.map((f) => ({
    path: f.path,
    class: f.class,
    source: f.source,
    sha256: hashContent(f.content),
    reason: f.reason,
    remove: f.remove,
  }));
  const notExecutable = findNotExecutable(disk, new Map(options.files.map((f) => [f.path, f.mode])));
  const planOptions = {
    force: options.force,
    backupDir: `${BACKUP_DIR}/${stamp(options.now ?? new Date())}`,
    version: options.version,
    keepRecordedVersion: options.keepRecordedVersion,
    notExecutable,
    claudeHook: options.claudeHook,
    ci: options.ci,
    agents: options.recordAgents,
  };
  const contents = new Map(options.files.map((f) => [f.path, f.content]));
  const diffOf = (item: PlanItem) =>
    renderUnifiedDiff(
      disk.get(item.path)?.content.toString('utf8') ?? '',
      contents.get(item.path)!.toString('utf8'),
      `a/${item.path}`,
      `b/${item.path}`,
    );
  let plan = planInstall(manifest, hashes, planned, planOptions);
  const base = {
    cwd: root,
    version: options.version,
    written: [],
    backups: [],
    warnings: [...(warning ? [warning] : []), ...leftovers],
  };

  // 3. A person at a terminal may settle conflicts; the plan is then made again with their answers.
  if (conflictsOf(plan).length && options.ask) {
    const resolutions = await askAll(conflictsOf(plan), options.ask, diffOf);
    if (!resolutions) return { ...base, plan, status: 'aborted', exitCode: EXIT.refused, diffs: {} };
    plan = planInstall(manifest, hashes, planned, { ...planOptions, resolutions });
  }
  if (options.guardDowngrade && !options.force) refuseDowngrade(manifest?.ralphkit, options.version, plan);
  const diffs = options.diff ? renderDiffs(plan, diffOf) : {};
  for (const [rel, abs] of resolveAllInside(
    root,
    plan.items.flatMap((i) => (i.backup ? [i.backup] : [])),
  ))
    real.set(rel, abs);

  // 4. All or nothing: any conflict left means no write at all.
  if (conflictsOf(plan).length) return { ...base, plan, status: 'conflicts', exitCode: EXIT.refused, diffs };
  if (planIsNoop(plan)) return { ...base, plan, status: 'nothing-to-do', exitCode: EXIT.ok, diffs };
  if (options.dryRun) return { ...base, plan, status: 'dry-run', exitCode: EXIT.ok, diffs };

  // 5. Apply: backups, files, manifest last.
  const current = new Map([...disk].flatMap(([p, d]) => (d ? [[p, d.content] as const] : [])));
  const modes = new Map(options.files.map((f) => [f.path, f.mode]));
  const applied = await applyInstall({
    root,
    plan,
    real,
    contents,
    modes,
    current,
    pauseAfterWrites: options.pauseAfterWrites,
  });
  return {
    ...base,
    plan,
    status: 'written',
    exitCode: EXIT.ok,
    diffs,
    written: applied.written,
    backups: applied.backups,
  };
}

/**
 * An interrupted run's leftovers go before planning: the staging folder (before its journal the repository was
 * untouched; after it, each file is whole, old or new, so the plan below finishes the install) and temp files.
 */
function cleanLeftovers(root: string, targets: Iterable<string>): string[] {
  const leftover = readLeftover(root);
  removeStaging(root);
  removeStaleTempFiles(targets);
  return leftover === 'decided'
    ? [`an earlier run was interrupted while putting its files in place; this run finishes the job`]
    : [];
}

function resolveRoot(cwd: string): string {
  return realpathSync(resolveCwdFolder(cwd));
}

/**
 * An older ralphkit (an npx cache, a pinned version) over a newer install would quietly put older runner and
 * skill files back. Refused unless --force; nothing to write means nothing to refuse.
 */
function refuseDowngrade(recorded: string | undefined, version: string, plan: InstallPlan): void {
  if (recorded === undefined || compareVersions(recorded, version) <= 0) return;
  const older = plan.items.filter((i) => i.action === 'upgrade' || i.action === 'overwrite').map((i) => i.path);
  if (!older.length) return;
  throw new RalphkitError(
    `this repository was set up by ralphkit ${recorded}, newer than this ralphkit ${version}; installing would put older versions of ${older.join(', ')} back`,
    {
      exitCode: EXIT.refused,
      hint: `${renderUpgradeHint(recorded)}, or add --force to go back to ${version}`,
    },
  );
}

function checkUniquePaths(files: readonly IncomingFile[]): void {
  const seen = new Set<string>();
  for (const f of files) {
    if (seen.has(f.path))
      throw new RalphkitError(`two files would both be installed as ${f.path}`, {
        exitCode: EXIT.refused,
        hint: 'give each skill a different name (file name or `name:` in its frontmatter)',
      });
    seen.add(f.path);
  }
}

async function askAll(
  conflicts: PlanItem[],
  ask: AskConflict,
  diffOf: (i: PlanItem) => string,
): Promise<Map<string, Resolution> | undefined> {
  const resolutions = new Map<string, Resolution>();
  for (const item of conflicts) {
    const answer = await ask(item, diffOf(item));
    if (answer === 'abort') return undefined;
    resolutions.set(item.path, answer);
  }
  return resolutions;
}

// Diffs only for files that exist and would change; a new file's diff would just repeat it whole.
function renderDiffs(plan: InstallPlan, diffOf: (i: PlanItem) => string): Record<string, string> {
  const changing = plan.items.filter((i) => ['upgrade', 'overwrite', 'conflict', 'merge'].includes(i.action));
  return Object.fromEntries(changing.map((i) => [i.path, diffOf(i)]));
}

/** A folder name for backups that sorts by time and is valid on every file system. */
export function stamp(date: Date): string {
  return date.toISOString().replace(/[:.]/g, '-');
}
