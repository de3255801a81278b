// Text and JSON for a plan: --dry-run, --diff, --json and the summary all print the same plan.
import { color } from '../logger.js';
import type { InstallPlan, PlanItem } from './types.js';
import { conflictsOf } from './plan.js';

const ACTION_COLOR: Record<PlanItem['action'], (s: string) => string> = {
  create: color.success,
  upgrade: color.info,
  overwrite: color.warn,
  conflict: color.error,
  keep: color.warn,
  identical: color.dim,
  'skip-state': color.dim,
};

const ACTION_WIDTH = 'skip-state'.length;

export function renderPlanLines(plan: InstallPlan): string[] {
  const width = Math.max(...plan.items.map((i) => i.path.length), plan.manifest.path.length);
  const lines = plan.items.map((item) => `  ${ACTION_COLOR[item.action](item.action.padEnd(ACTION_WIDTH))}  ${item.path.padEnd(width)}  ${color.dim(item.reason)}`);
  lines.push(`  ${color.dim(plan.manifest.action.padEnd(ACTION_WIDTH))}  ${plan.manifest.path.padEnd(width)}  ${color.dim('manifest: version and hashes of managed files')}`);
  return lines;
}

/** One line per conflicting path with the flag that resolves it. */
export function renderConflicts(plan: InstallPlan, command: string): string[] {
  return conflictsOf(plan).map((item) => `  ${item.path}: ${item.reason}; \`${command} --force\` backs yours up and installs ralphkit's`);
}

export function countActions(plan: InstallPlan): Partial<Record<PlanItem['action'], number>> {
  const counts: Partial<Record<PlanItem['action'], number>> = {};
  for (const item of plan.items) counts[item.action] = (counts[item.action] ?? 0) + 1;
  return counts;
}

/** "2 create, 1 upgrade, 3 identical" in the table's order. */
export function renderCounts(plan: InstallPlan): string {
  const counts = countActions(plan);
  return (Object.keys(ACTION_COLOR) as PlanItem['action'][])
    .filter((a) => counts[a])
    .map((a) => `${counts[a]} ${a}`)
    .join(', ');
}
