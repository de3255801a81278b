// A realistic repository state for the dashboard screenshot (docs/dashboard.png): an 8-story plan
// half done, one story rejected by the runner, a loop running, an older loop finished, a progress log.
import { story, writeLedger, writeLoop, writePlan, writeProgress, type LedgerLineFixture } from './view-fixtures.js';
import type { Prd } from '../../src/prd/types.js';

const minutesAgo = (m: number, now: number) => new Date(now - m * 60_000).toISOString();

export const DEMO_PLAN: Prd = {
  project: 'TaskApp',
  branchName: 'ralph/task-priority',
  baseBranch: 'main',
  description: 'Priority levels for tasks: stored, shown, edited, filtered and sorted.',
  checks: ['npm test', 'npx tsc --noEmit'],
  userStories: [
    story('US-001', {
      title: 'Add a priority column to the tasks table',
      priority: 1,
      passes: true,
      acceptanceCriteria: [
        'Migration adds `priority` (smallint, default 2)',
        'Existing tasks get priority 2',
        'Typecheck passes',
      ],
      checks: ['npm test -- db'],
    }),
    story('US-002', {
      title: 'Expose priority in the tasks API',
      priority: 2,
      passes: true,
      dependsOn: ['US-001'],
      acceptanceCriteria: ['GET /tasks returns `priority`', 'PATCH /tasks/:id validates 1–4', 'Typecheck passes'],
      checks: ['npm test -- api'],
    }),
    story('US-003', {
      title: 'Show a priority badge on each task card',
      priority: 3,
      passes: true,
      dependsOn: ['US-002'],
      acceptanceCriteria: ['Badge uses the Badge primitive', 'P1 is red, P4 is grey', 'Verify in browser'],
    }),
    story('US-004', {
      title: 'Priority selector in the task editor',
      description: 'As a user I pick a task’s priority while editing it, and it is saved with the task.',
      priority: 4,
      dependsOn: ['US-002'],
      acceptanceCriteria: [
        'Select with four options, current one preselected',
        'Saving persists the choice',
        'Keyboard accessible',
        'Typecheck passes',
      ],
      checks: ['npm test -- editor'],
      notes: 'Select renders; saving still sends the old value.\n[ralph] rejected: `npm test -- editor` exited with 1',
    }),
    story('US-005', {
      title: 'Filter the task list by priority',
      priority: 5,
      dependsOn: ['US-002'],
      acceptanceCriteria: ['Filter chips for P1–P4', 'Filter state kept in the URL', 'Typecheck passes'],
    }),
    story('US-006', {
      title: 'Sort by priority, then by due date',
      priority: 6,
      dependsOn: ['US-005'],
      acceptanceCriteria: ['Sort menu gains “Priority”', 'Ties break on due date', 'Typecheck passes'],
    }),
    story('US-007', {
      title: 'Keyboard shortcuts 1–4 set the priority',
      priority: 7,
      dependsOn: ['US-004'],
      acceptanceCriteria: ['Keys 1–4 set the focused task’s priority', 'Shortcut help lists them'],
    }),
    story('US-008', {
      title: 'Include priority in the CSV export',
      priority: 8,
      dependsOn: ['US-002'],
      acceptanceCriteria: ['New `priority` column after `title`', 'Typecheck passes'],
    }),
  ],
};

export const DEMO_PROGRESS = `# Progress log
Started: 2026-11-29T09:12:04.118Z

## Codebase Patterns
- Migrations live in \`db/migrations/\`, numbered; run \`npm run db:migrate\` before the tests
- API input is validated with zod schemas in \`src/api/schemas.ts\`
- UI uses the \`Badge\` primitive from \`src/ui/badge.tsx\`; never raw colours

## Sessions
Each session appends one entry at the end of this file (date, story, what changed, files,
learnings). Append only; do not rewrite earlier entries.
---

## 2026-11-29 09:31 - US-001
- Added \`priority\` column (smallint, default 2), migration 0007
- Files changed: db/migrations/0007_priority.sql, src/db/task.ts
- **Learnings for future iterations:**
  - The test DB is recreated per file; seed data lives in test/fixtures/seed.ts
---

## 2026-11-29 09:52 - US-002
- GET /tasks and PATCH /tasks/:id carry \`priority\`; 400 outside 1–4
- Files changed: src/api/tasks.ts, src/api/schemas.ts
- **Learnings for future iterations:**
  - The API tests need \`NODE_ENV=test\` or the auth middleware rejects them
---

## 2026-11-29 10:36 - US-004
- Priority select in the task editor, wired to PATCH /tasks/:id
- Files changed: src/ui/task-editor.tsx, src/ui/task-editor.test.tsx
---

## 2026-11-29 10:41 UTC - ralph: US-004 rejected (iteration 4)
Story: US-004 Priority selector in the task editor
Commit: 9f3c2e1b7a4d
Reason: \`npm test -- editor\` exited with 1
Command: npm test -- editor
Exit code: 1
Output (last 40 lines):
\`\`\`
 FAIL  src/ui/task-editor.test.tsx > saves the chosen priority
AssertionError: expected 2 to be 3
 ❯ src/ui/task-editor.test.tsx:48:31
\`\`\`
The runner set passes back to false. Fix the cause, commit, then claim the story again.
---

## 2026-11-29 11:02 - US-003
- Task cards show a priority badge; colours from the theme
- **Learnings for future iterations:**
  - Storybook is not wired to CI; check components in the app instead
`;

/** Writes the demo into `repo`; `runningPid` is the pid the running loop claims (a live one shows it running). */
export function writeDemoRepo(repo: string, runningPid: number, now = Date.now()): void {
  writePlan(repo, DEMO_PLAN);
  writeProgress(repo, DEMO_PROGRESS);
  writeLoop(repo, {
    id: '20261128-1702-setup',
    iteration: 10,
    maxIterations: 10,
    status: 'max-iterations',
    pid: 4242,
    startedAt: minutesAgo(1180, now),
    updatedAt: minutesAgo(1102, now),
    costUsd: 6.12,
    exitCode: 1,
    message: 'reached 10 iterations with 2 stories left',
  });
  writeLoop(repo, {
    id: '20261129-0912-priority',
    iteration: 5,
    maxIterations: 12,
    status: 'running',
    pid: runningPid,
    startedAt: minutesAgo(94, now),
    updatedAt: minutesAgo(0.2, now),
    costUsd: 3.47,
    exitCode: null,
  });
  const loop = '20261129-0912-priority';
  const sha = '9f3c2e1b7a4d5e6f708192a3b4c5d6e7f8091a2b';
  const check = (
    m: number,
    iteration: number,
    story: string,
    scope: 'prd' | 'story',
    command: string,
    exitCode: number,
    durationMs: number,
  ): LedgerLineFixture => ({
    time: minutesAgo(m, now),
    loop,
    iteration,
    story,
    kind: 'check',
    scope,
    command,
    exitCode,
    durationMs,
    commit: sha,
  });
  const verdict = (
    m: number,
    iteration: number,
    story: string,
    status: 'verified' | 'rejected',
    reason?: string,
  ): LedgerLineFixture => ({
    time: minutesAgo(m, now),
    loop,
    iteration,
    story,
    kind: 'verdict',
    command: null,
    exitCode: null,
    status,
    reason,
    commit: sha,
  });
  writeLedger(repo, loop, [
    check(75, 1, 'US-001', 'prd', 'npm test', 0, 8410),
    check(75, 1, 'US-001', 'prd', 'npx tsc --noEmit', 0, 3120),
    check(75, 1, 'US-001', 'story', 'npm test -- db', 0, 2260),
    verdict(75, 1, 'US-001', 'verified'),
    check(54, 2, 'US-002', 'prd', 'npm test', 0, 9020),
    check(54, 2, 'US-002', 'prd', 'npx tsc --noEmit', 0, 3310),
    check(54, 2, 'US-002', 'story', 'npm test -- api', 0, 2980),
    verdict(54, 2, 'US-002', 'verified'),
    check(21, 4, 'US-004', 'prd', 'npm test', 0, 9240),
    check(21, 4, 'US-004', 'prd', 'npx tsc --noEmit', 0, 3290),
    check(21, 4, 'US-004', 'story', 'npm test -- editor', 1, 4110),
    verdict(21, 4, 'US-004', 'rejected', '`npm test -- editor` exited with 1'),
  ]);
}
