// The plan `install` writes is an example (task tags for some other app). The loop refuses it (engine
// run/preflight.ts), `validate` warns about it, and the plan finder passes over it. One detection for all three:
// compared as JSON with sorted keys, so reformatting still counts as the example, and any edit at all (a story,
// the project, the branch) makes it the user's plan. The template is inlined by the bundler (a JSON import).
import examplePlan from '../../templates/ralph/prd.json';

const EXAMPLE = renderCanonical(examplePlan);
// The example as earlier versions installed it, before its description named the engine's own validate.
const OLDER_DESCRIPTION =
  'An example plan: replace it with your own. Write a PRD with the prd skill, then turn it into this file with the ralph skill, and check it with `npx ralphkit validate`.';

export function isExamplePlan(prd: unknown): boolean {
  // Most plans differ in the branch or the number of stories: answered without rendering a large plan.
  const plan = prd as { branchName?: unknown; userStories?: unknown } | null;
  if (typeof plan !== 'object' || plan === null || plan.branchName !== examplePlan.branchName) return false;
  if (!Array.isArray(plan.userStories) || plan.userStories.length !== examplePlan.userStories.length) return false;
  const description = (prd as { description?: unknown }).description;
  return (
    renderCanonical(description === OLDER_DESCRIPTION ? { ...plan, description: examplePlan.description } : prd) ===
    EXAMPLE
  );
}

function renderCanonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
