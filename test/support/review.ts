// The review gate's e2e pieces: plans whose stories the fake implementer (test/fixtures/review/) works, the runner
// started with it, and the ledger's review lines.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { FIXTURES, run, type RunResult } from './repo.js';
import { parseLedger, type ReviewLine } from '../../src/engine/store/ledger.js';
import type { Prd, Story } from '../../src/prd/types.js';
import { fileStory, plan } from './plan.js';

/** A story the implementer's check passes at once, with a criterion (`<id>.criterion`) only the reviewer checks. */
export const reviewStory = (id: string, priority: number, extra: Partial<Story> = {}): Story =>
  fileStory(id, priority, {
    description: `As a user I get ${id}.`,
    acceptanceCriteria: [`${id}.txt says it is done`, 'the criterion file exists'],
    ...extra,
  });

export const reviewPlan = (...stories: Story[]): Prd => plan(stories, { project: 'Demo', branchName: 'ralph/demo' });

/** `node <test/fixtures/review/name>`, as a command line. */
export const reviewFixture = (name: string) => `node ${JSON.stringify(path.join(FIXTURES, 'review', name))}`;

/** The installed runner with the fake implementer, loop id `e2e`. */
export function ralphReviewed(dir: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
  const base = [
    '--agent-cmd',
    reviewFixture('implementer.mjs'),
    '--pause',
    '0',
    '--iteration-timeout',
    '30s',
    '--name',
    'e2e',
  ];
  return run(path.join(dir, 'ralph/ralph.sh'), [...base, ...args], { cwd: dir, env });
}

export const reviewLines = (dir: string) =>
  parseLedger(readFileSync(path.join(dir, 'ralph/.runs/e2e/ledger.jsonl'), 'utf8')).filter(
    (l): l is ReviewLine => l.kind === 'review',
  );

/**
 * The real-CLI reviewer tests' plan (test/real-agents/): one story whose command checks only "starts with hello"; the
 * second criterion, "hello, world", is the reviewer's to judge.
 */
export const GREETER_PLAN = {
  project: 'Greeter',
  branchName: 'ralph/greeter',
  userStories: [
    {
      id: 'US-001',
      title: 'Greet the world',
      description: 'As a visitor I am greeted.',
      acceptanceCriteria: ['hello.txt starts with hello', 'hello.txt greets the world: it says hello, world'],
      priority: 1,
      passes: false,
      notes: '',
      checks: ['grep -q ^hello hello.txt'],
    },
  ],
};

/**
 * The planted texts (`PLANT-...`, test/fixtures/review/instruction-planter.mjs) in a reviewer's request outside its
 * diff block, where the committed plants are the agent's work under review: what reached the model on its own.
 */
export function plantsOutsideDiff(request: string): string[] {
  const outside = request.replace(/# The diff of the work[^\n]*\n(`{3,})diff\n[\s\S]*?\n\1/g, '');
  return outside.match(/PLANT-[A-Z-]+/g) ?? [];
}
