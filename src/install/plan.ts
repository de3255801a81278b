// The decision table of SPEC §2 as one pure function: (manifest, disk, new files, options) → plan.
import type {
  Action,
  CiProvider,
  ClaudeHookRecord,
  FileClass,
  FileSource,
  InstallPlan,
  Manifest,
  ManifestEntry,
  PlanItem,
  Resolution,
} from './types.js';
import { MANIFEST_PATH } from './types.js';
import type { SkillAgent } from '../skills/agent-names.js';

/** What the planner needs to know about one new file: no contents, only hashes. */
export interface PlannedFile {
  path: string;
  class: FileClass;
  source: FileSource;
  sha256: string;
  /** Merged files only (see IncomingFile). */
  reason?: string;
  remove?: boolean;
}

export interface PlanOptions {
  force?: boolean;
  /** Answers given at the prompt, by path, for files that would otherwise conflict. */
  resolutions?: ReadonlyMap<string, Resolution>;
  /** Folder (repository-relative) that backups of overwritten files go into. */
  backupDir: string;
  version: string;
  /**
   * Keep the manifest's `ralphkit` version as recorded (`skill add`): it says which release ralphkit's own
   * files come from, and only `install` changes those. A first manifest records `version`.
   */
  keepRecordedVersion?: boolean;
  /** Paths whose content is right but which have lost their execute bits (see findNotExecutable). */
  notExecutable?: ReadonlySet<string>;
  /** The Stop hook record for the next manifest: undefined keeps the previous one, null drops it. */
  claudeHook?: ClaudeHookRecord | null;
  /** The CI workflow's record for the next manifest: undefined keeps the previous one, null drops it. */
  ci?: CiProvider | null;
  /** The skill folders this install wrote, for the next manifest; undefined keeps the previous record. */
  agents?: SkillAgent[];
}

/**
 * `disk` maps each path to the sha256 of the file there, or undefined when it is missing.
 * `manifest` is undefined before the first install (or when it cannot be read).
 */
export function planInstall(
  manifest: Manifest | undefined,
  disk: ReadonlyMap<string, string | undefined>,
  files: readonly PlannedFile[],
  options: PlanOptions,
): InstallPlan {
  const items = files.map((file) => planFile(file, disk.get(file.path), baselineFor(manifest, file), options));
  const records = {
    claudeHook: options.claudeHook === undefined ? manifest?.claudeHook : (options.claudeHook ?? undefined),
    ci: options.ci === undefined ? manifest?.ci : (options.ci ?? undefined),
    agents: options.agents ?? manifest?.agents,
  };
  const next = planManifest(
    manifest,
    files,
    items,
    options.keepRecordedVersion && manifest ? manifest.ralphkit : options.version,
    records,
  );
  const action = !manifest ? 'create' : renderManifest(manifest) === renderManifest(next) ? 'identical' : 'update';
  return { items, manifest: { path: MANIFEST_PATH, action, next } };
}

// A manifest entry recorded for another source (e.g. a user's skill where ralphkit now ships one
// of the same name) says nothing about this file, so it does not count as a baseline.
function baselineFor(manifest: Manifest | undefined, file: PlannedFile): string | undefined {
  const entry = manifest?.files[file.path];
  return entry && entry.source === file.source ? entry.sha256 : undefined;
}

export function planFile(
  file: PlannedFile,
  onDisk: string | undefined,
  baseline: string | undefined,
  options: PlanOptions,
): PlanItem {
  const item = (action: Action, reason: string): PlanItem => ({ path: file.path, class: file.class, action, reason });
  if (file.class === 'merged') return planMerged(file, onDisk, item);
  if (file.remove) return planRemoval(file, onDisk, baseline, options, item);
  if (onDisk === undefined) return item('create', file.class === 'state' ? 'new (state: yours from now on)' : 'new');
  if (file.class === 'state') return item('skip-state', 'state file: yours, never touched');
  if (onDisk === file.sha256) {
    return options.notExecutable?.has(file.path)
      ? item('fix-mode', 'up to date, but not executable: made executable again')
      : item('identical', 'up to date');
  }
  if (onDisk === baseline) return item('upgrade', 'unchanged since installed; new version');
  const edited = baseline === undefined ? 'not installed by ralphkit' : 'edited since installed';
  const choice = options.force ? 'overwrite' : options.resolutions?.get(file.path);
  if (choice === 'overwrite') {
    const backup = `${options.backupDir}/${file.path}`;
    return { ...item('overwrite', `${edited}; yours is backed up to ${backup}`), backup };
  }
  if (baseline === file.sha256)
    return {
      ...item('keep', `${edited}; nothing new from ralphkit, so your file stays`),
      keptBecause: 'nothing-newer',
    };
  if (choice === 'keep') return { ...item('keep', `${edited}; kept at your request`), keptBecause: 'chosen' };
  return item(
    'conflict',
    baseline === undefined
      ? `${edited}, and differs from ralphkit's version`
      : `${edited}, and ralphkit ships a new version`,
  );
}

/**
 * A managed file to take out: gone when it is as ralphkit installed it (or as ralphkit would install it now); an
 * edited one is the user's work, so the same rule as an upgrade: a conflict, settled by --force (backup first) or at
 * the prompt ("keep": the file stays and ralphkit forgets it).
 */
function planRemoval(
  file: PlannedFile,
  onDisk: string | undefined,
  baseline: string | undefined,
  options: PlanOptions,
  item: (action: Action, reason: string) => PlanItem,
): PlanItem {
  if (onDisk === undefined) return { ...item('identical', 'not there'), removing: true };
  if (onDisk === baseline || onDisk === file.sha256)
    return { ...item('remove', file.reason ?? 'removed'), removing: true };
  const choice = options.force ? 'overwrite' : options.resolutions?.get(file.path);
  if (choice === 'overwrite') {
    const backup = `${options.backupDir}/${file.path}`;
    return {
      ...item('remove', `edited since installed; yours is backed up to ${backup}, then removed`),
      backup,
      removing: true,
    };
  }
  if (choice === 'keep')
    return {
      ...item('keep', 'edited since installed; kept at your request, and ralphkit no longer manages it'),
      keptBecause: 'chosen',
      removing: true,
    };
  return { ...item('conflict', 'edited since installed: removing it would lose your edits'), removing: true };
}

// The user's own file, edited in place: no baseline, no conflict; the new text was made from the bytes on disk.
function planMerged(
  file: PlannedFile,
  onDisk: string | undefined,
  item: (action: Action, reason: string) => PlanItem,
): PlanItem {
  if (file.remove)
    return onDisk === undefined ? item('identical', 'not there') : item('remove', file.reason ?? 'removed');
  if (onDisk === file.sha256) return item('identical', 'up to date');
  return onDisk === undefined ? item('create', file.reason ?? 'new') : item('merge', file.reason ?? 'merged');
}

function planManifest(
  previous: Manifest | undefined,
  files: readonly PlannedFile[],
  items: readonly PlanItem[],
  version: string,
  records: Pick<Manifest, 'claudeHook' | 'ci' | 'agents'>,
): Manifest {
  // Entries for files outside this plan (e.g. skills of another agent folder) are carried over.
  const entries: Record<string, ManifestEntry> = { ...previous?.files };
  items.forEach((item, i) => {
    const file = files[i];
    if (file.class !== 'managed') return;
    // Removed, or kept as the user's: either way no longer ralphkit's (a conflict writes nothing at all).
    if (file.remove) return void delete entries[file.path];
    if (['create', 'identical', 'upgrade', 'fix-mode', 'overwrite'].includes(item.action))
      entries[file.path] = { sha256: file.sha256, source: file.source };
  });
  const sorted = Object.fromEntries(
    Object.keys(entries)
      .sort()
      .map((k) => [k, entries[k]]),
  );
  return {
    ralphkit: version,
    files: sorted,
    ...(records.claudeHook ? { claudeHook: records.claudeHook } : {}),
    ...(records.ci ? { ci: records.ci } : {}),
    ...(records.agents ? { agents: records.agents } : {}),
  };
}

export function renderManifest(manifest: Manifest): string {
  const hook = manifest.claudeHook ? { claudeHook: manifest.claudeHook } : {};
  const ci = manifest.ci ? { ci: manifest.ci } : {};
  const agents = manifest.agents ? { agents: manifest.agents } : {};
  return `${JSON.stringify({ ralphkit: manifest.ralphkit, files: manifest.files, ...hook, ...ci, ...agents }, null, 2)}\n`;
}

/** True when applying the plan would write nothing at all. */
export function planIsNoop(plan: InstallPlan): boolean {
  return (
    plan.manifest.action === 'identical' &&
    plan.items.every((i) => ['identical', 'keep', 'skip-state'].includes(i.action))
  );
}

export function conflictsOf(plan: InstallPlan): PlanItem[] {
  return plan.items.filter((i) => i.action === 'conflict');
}
