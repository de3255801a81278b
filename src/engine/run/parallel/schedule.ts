// Which story a free worker of a --parallel run takes next, from the plan alone (no git, no processes): a story
// starts only when every story it dependsOn is merged (passes on the plan's branch), never twice at once, and
// never after it was given up; a story that waits on a given-up one can never start, and is said so.
import type { Prd, Story } from '../../../prd/types.js';
import { activeStories, isSettled, isSkipped } from '../../../prd/skip.js';

export interface Schedule {
  /** Stories a worker may take now, in the order to take them (priority, then plan order). */
  ready: string[];
  /** Open stories that wait for stories still in work or in the queue. */
  waiting: string[];
  /** Open stories that can never start: each with the given-up story it waits on (directly or through others). */
  blocked: { id: string; by: string }[];
  /** True when every active story passes. */
  done: boolean;
}

/**
 * `busy`: stories a worker holds or the merge queue holds. `givenUp`: stories the run gave up on. Dependencies the
 * plan sets aside (skip) or does not have are nothing to wait for (`ralphkit validate` refuses unknown ones).
 */
export function planSchedule(prd: Prd, busy: ReadonlySet<string>, givenUp: ReadonlySet<string>): Schedule {
  const byId = new Map(prd.userStories.map((s) => [s.id, s]));
  const open = activeStories(prd.userStories).filter((s) => s.passes !== true);
  const ready: Story[] = [];
  const waiting: string[] = [];
  const blocked: { id: string; by: string }[] = [];
  for (const story of open) {
    if (busy.has(story.id) || givenUp.has(story.id)) continue;
    const by = findGivenUpDependency(story, byId, givenUp);
    if (by) blocked.push({ id: story.id, by });
    else if (unmet(story, byId).length) waiting.push(story.id);
    else ready.push(story);
  }
  // A stable sort: stories of one priority stay in plan order.
  ready.sort((a, b) => rank(a) - rank(b));
  return { ready: ready.map((s) => s.id), waiting, blocked, done: open.length === 0 };
}

/** A missing or non-numeric priority sorts after every numbered one (validate warns about those plans). */
function rank(story: Story): number {
  return Number.isFinite(story.priority) ? story.priority : Number.MAX_SAFE_INTEGER;
}

/** The dependencies of `story` that do not pass yet. */
function unmet(story: Story, byId: ReadonlyMap<string, Story>): string[] {
  return (
    story.dependsOn?.filter((d) => {
      const dep = byId.get(d);
      return dep !== undefined && !isSettled(dep);
    }) ?? []
  );
}

/** The given-up story `story` waits on, through any chain of open dependencies; null when there is none. */
export function findGivenUpDependency(
  story: Story,
  byId: ReadonlyMap<string, Story>,
  givenUp: ReadonlySet<string>,
): string | null {
  if (!story.dependsOn?.length) return null;
  const seen = new Set<string>([story.id]);
  const stack = [...story.dependsOn];
  while (stack.length) {
    const id = stack.pop() as string;
    if (seen.has(id)) continue;
    seen.add(id);
    const dep = byId.get(id);
    if (!dep || isSkipped(dep) || dep.passes === true) continue;
    if (givenUp.has(id)) return id;
    if (dep.dependsOn) stack.push(...dep.dependsOn);
  }
  return null;
}
