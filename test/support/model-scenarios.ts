// Scenarios for the scripted model server: a "model" that works a Ralph plan through Claude Code's real
// Bash tool, deciding from prd.json on disk which story is next, the way a fresh agent would (or, as a --parallel
// worker, doing the story the runner's prompt names).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { requestText, type AssistantTurn, type Scenario, type ScenarioContext } from './model-server.js';

export interface PlanStory {
  id: string;
  title: string;
  priority: number;
  passes: boolean;
  checks?: string[];
}

/** What the model does about the story it picked, in one Bash command. */
export interface StoryAction {
  /** Files to write, relative to the repository root. */
  files?: Record<string, string>;
  /** Flip the story to `passes: true` in prd.json. */
  claim?: boolean;
  /** Run the plan's and the story's checks before committing; a failing check stops the command. */
  runChecks?: boolean;
  /** `git add -A && git commit -m "feat: <id> - <title>"`. */
  commit?: boolean;
  /** A line appended to ralph/progress.txt. */
  progress?: string;
}

export interface WorkerOptions {
  /** prd.json relative to the repository root (default ralph/prd.json). */
  prd?: string;
  decide: (story: PlanStory) => StoryAction;
}

/**
 * First request of a run: pick the open story with the lowest priority and act on it with one Bash call.
 * After the tool result: a final message, with `<promise>COMPLETE</promise>` on its own line when the plan
 * on disk has no open story left.
 */
export function ralphWorker(options: WorkerOptions): Scenario {
  const prdRel = options.prd ?? 'ralph/prd.json';
  return (ctx: ScenarioContext): AssistantTurn => {
    const plan = readPlan(ctx, prdRel);
    const open = plan.userStories.filter((s) => !s.passes).sort((a, b) => a.priority - b.priority);
    if (ctx.turn === 0 && open.length > 0) {
      const story = open[0];
      const command = renderStoryCommand(plan, story, options.decide(story), prdRel);
      return { blocks: [{ type: 'text', text: `Working on ${story.id}.` }, bash(command, `Implement ${story.id}`)] };
    }
    const output = ctx.toolResults
      .map((r) => r.text)
      .join('\n')
      .trim();
    const done = open.length === 0 ? '\n<promise>COMPLETE</promise>' : '';
    return { blocks: [{ type: 'text', text: `Iteration finished.\n${output}${done}` }] };
  };
}

export function bash(
  command: string,
  description = 'Run a command',
): { type: 'tool_use'; name: 'Bash'; input: Record<string, unknown> } {
  return { type: 'tool_use', name: 'Bash', input: { command, description } };
}

interface Plan {
  checks?: string[];
  userStories: PlanStory[];
}

function readPlan(ctx: ScenarioContext, prdRel: string): Plan {
  if (!ctx.repo) throw new Error('scenario needs the repository path (server option `repo`)');
  return JSON.parse(readFileSync(path.join(ctx.repo, prdRel), 'utf8')) as Plan;
}

/** One shell command: a node script writes the files and the plan, then checks, then the commit, chained by &&. */
export function renderStoryCommand(plan: Plan, story: PlanStory, action: StoryAction, prdRel: string): string {
  const script = [
    'const fs = require("fs"), path = require("path");',
    `for (const [f, c] of Object.entries(${JSON.stringify(action.files ?? {})})) { fs.mkdirSync(path.dirname(f), { recursive: true }); fs.writeFileSync(f, c); }`,
    action.claim
      ? `const p = JSON.parse(fs.readFileSync(${JSON.stringify(prdRel)}, "utf8")); p.userStories.find((s) => s.id === ${JSON.stringify(story.id)}).passes = true; fs.writeFileSync(${JSON.stringify(prdRel)}, JSON.stringify(p, null, 2) + "\\n");`
      : '',
    action.progress ? `fs.appendFileSync("ralph/progress.txt", ${JSON.stringify(`${action.progress}\n`)});` : '',
  ].join('\n');
  const steps = [`node -e ${shellQuote(script)}`];
  if (action.runChecks) steps.push(...[...(plan.checks ?? []), ...(story.checks ?? [])].map((c) => `(${c})`));
  if (action.commit) steps.push('git add -A', `git commit -q -m ${shellQuote(`feat: ${story.id} - ${story.title}`)}`);
  return `${steps.join(' && ')} && echo STORY-DONE ${story.id}`;
}

export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export interface AssignedWorkerOptions {
  /** The shell command that does a story's work in the agent's working directory, before its commit. */
  work: (storyId: string) => string;
  /** Awaited on the first request of each run, before it is answered: `cwd` is the CLI's working directory. */
  onStart?: (storyId: string, cwd: string) => void | Promise<void>;
}

/**
 * A --parallel worker: the story is the one the request names (`your story is <ID>`, from the runner's prompt), not
 * one it picks from the plan. One Bash call checks RALPH_STORY_ID names that story too, does the work, commits it,
 * then sets that story's `passes` in $RALPH_PRD (the worker's own plan file) and commits again.
 */
export function assignedWorker(options: AssignedWorkerOptions): Scenario {
  return async (ctx: ScenarioContext): Promise<AssistantTurn> => {
    // The messages only: the runner's prompt is the first user message, and the system prompt is the CLI's own.
    const story = /your story is (US-\d+)/.exec(requestText({ ...ctx.body, system: undefined }))?.[1];
    if (!story) throw new Error('the request names no story ("your story is <ID>")');
    if (ctx.turn > 0)
      return {
        blocks: [
          {
            type: 'text',
            text: `Finished ${story}.\n${ctx.toolResults
              .map((r) => r.text)
              .join('\n')
              .trim()}`,
          },
        ],
      };
    await options.onStart?.(story, ctx.repo ?? '');
    const claim = `const fs = require("fs"), f = process.env.RALPH_PRD, p = JSON.parse(fs.readFileSync(f, "utf8")); p.userStories.find((s) => s.id === ${JSON.stringify(story)}).passes = true; fs.writeFileSync(f, JSON.stringify(p, null, 2) + "\\n");`;
    const steps = [
      `test "$RALPH_STORY_ID" = ${story}`,
      `(${options.work(story)})`,
      'git add -A',
      `git commit -q -m ${shellQuote(`feat: ${story}`)}`,
      `node -e ${shellQuote(claim)}`,
      `git commit -q -am ${shellQuote(`chore: ${story} passes`)}`,
    ];
    return {
      blocks: [
        { type: 'text', text: `Working on ${story}.` },
        bash(`${steps.join(' && ')} && echo STORY-DONE ${story}`, `Implement ${story}`),
      ],
    };
  };
}
