// Text and JSON for a plan: --dry-run, --diff, --json and the summary all print the same plan.
import { color } from '../logger.js';
import type { InstallPlan, PlanItem } from './types.js';
import { conflictsOf } from './plan.js';

const ACTION_COLOR: Record<PlanItem['action'], (s: string) => string> = {
  create: color.success,
  upgrade: color.info,
  'fix-mode': color.info,
  overwrite: color.warn,
  conflict: color.error,
  keep: color.warn,
  identical: color.dim,
  'skip-state': color.dim,
  merge: color.info,
  remove: color.info,
};

const ACTION_WIDTH = 'skip-state'.length;

export function renderPlanLines(plan: InstallPlan): string[] {
  const width = Math.max(...plan.items.map((i) => i.path.length), plan.manifest.path.length);
  const lines = plan.items.map(
    (item) =>
      `  ${ACTION_COLOR[item.action](item.action.padEnd(ACTION_WIDTH))}  ${item.path.padEnd(width)}  ${color.dim(item.reason)}`,
  );
  lines.push(
    `  ${color.dim(plan.manifest.action.padEnd(ACTION_WIDTH))}  ${plan.manifest.path.padEnd(width)}  ${color.dim('manifest: version and hashes of managed files')}`,
  );
  return lines;
}

/** One line per conflicting path with the flag that resolves it. */
export function renderConflicts(plan: InstallPlan, command: string): string[] {
  return conflictsOf(plan).map((item) =>
    item.removing
      ? `  ${item.path}: ${item.reason}; \`${command} --no-ci --force\` backs yours up to ralph/.backup/ and removes it (or delete it yourself)`
      : `  ${item.path}: ${item.reason}; \`${command} --force\` backs yours up and installs ralphkit's`,
  );
}

type RowAction = PlanItem['action'] | InstallPlan['manifest']['action'];

/** Rows of the printed table by action, the manifest's row included, so the summary adds up to the table. */
export function countActions(plan: InstallPlan): Partial<Record<RowAction, number>> {
  const counts: Partial<Record<RowAction, number>> = {};
  for (const action of [...plan.items.map((i) => i.action), plan.manifest.action])
    counts[action] = (counts[action] ?? 0) + 1;
  return counts;
}

/** "2 create, 1 upgrade, 3 identical, 1 update" in the table's order (the manifest's `update` last). */
export function renderCounts(plan: InstallPlan): string {
  const counts = countActions(plan);
  return ([...Object.keys(ACTION_COLOR), 'update'] as RowAction[])
    .filter((a) => counts[a])
    .map((a) => `${counts[a]} ${a}`)
    .join(', ');
}

/** One plain sentence per file left as the user has it, e.g. "Kept your edited ralph/ralph.sh (…)." */
export function renderKeptLines(plan: InstallPlan, command: string): string[] {
  return plan.items.filter((i) => i.action === 'keep').map((i) => renderKeptLine(i, command));
}

function renderKeptLine(i: PlanItem, command: string): string {
  if (i.removing) return `Kept your ${i.path} as you chose: it is yours now, and ralphkit no longer manages it.`;
  const line =
    i.keptBecause === 'chosen'
      ? `Kept your ${i.path} over the new version, as you chose (\`${command} --force\` backs yours up and installs the new one).`
      : `Kept your edited ${i.path} (ralphkit has nothing newer for it).`;
  return line + (ENGINE_PATHS.includes(i.path) ? renderEngineKept(command) : '');
}

// The loop refuses an engine that is not what ralphkit installed (SPEC §6), so keeping an edit there is worth a word.
const ENGINE_PATHS = ['ralph/ralph.sh', 'ralph/ralph.mjs'];

function renderEngineKept(command: string): string {
  return ` The loop refuses to start with a modified engine: \`${command} --force\` puts ralphkit's back, or run the loop with --allow-modified-engine.`;
}
