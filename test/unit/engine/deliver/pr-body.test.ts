import { describe, expect, it } from 'vitest';
import type { Prd } from '../../../../src/prd/types.js';
import type { LedgerLine } from '../../../../src/engine/store/ledger.js';
import { renderPrBody, renderPrTitle } from '../../../../src/engine/deliver/pr-body.js';
import { plan as basePlan, story as baseStory } from '../../../support/plan.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const story = (id: string, passes: Prd['userStories'][number]['passes'], extra: object = {}) =>
  baseStory(id, { title: `Title ${id}`, acceptanceCriteria: ['x'], passes, ...extra });
const plan = (stories: Prd['userStories'], extra: Omit<Partial<Prd>, 'userStories'> = {}): Prd =>
  basePlan(stories, { project: 'Shop', branchName: 'ralph/shop', ...extra });

let clock = 0;
const at = () => `2026-12-02T08:00:${String(clock++).padStart(2, '0')}.000Z`;
const check = (story: string, iteration: number, commit: string, command: string, exitCode: number): LedgerLine => ({
  kind: 'check',
  time: at(),
  loop: 'L',
  iteration,
  story,
  commit,
  scope: 'prd',
  command,
  exitCode,
  signal: null,
  timedOut: false,
  durationMs: 1,
  outputSha256: 'x',
});
const verdict = (
  story: string,
  iteration: number,
  commit: string,
  status: 'verified' | 'rejected' | 'unverified',
  reason?: string,
): LedgerLine => ({
  kind: 'verdict',
  time: at(),
  loop: 'L',
  iteration,
  story,
  commit,
  command: null,
  exitCode: null,
  status,
  durationMs: 1,
  outputSha256: null,
  ...(reason ? { reason } : {}),
});

describe('renderPrTitle', () => {
  it('project and description, else one of them, else the branch', () => {
    expect(renderPrTitle(plan([], { description: 'checkout flow' }))).toBe('Shop: checkout flow');
    expect(renderPrTitle(plan([]))).toBe('Shop');
    expect(renderPrTitle({ branchName: 'ralph/x', userStories: [] })).toBe('ralph: ralph/x');
    expect(renderPrTitle(plan([], { project: 'a\nb' }))).toBe('a b');
  });
});

describe('renderPrBody', () => {
  const ledger: LedgerLine[] = [
    check('US-1', 1, A, 'npm test', 1),
    verdict('US-1', 1, A, 'rejected', 'check npm test exited 1'),
    check('US-1', 2, B, 'npm test', 0),
    verdict('US-1', 2, B, 'verified'),
    check('US-2', 2, B, 'npm run e2e', 1),
    verdict('US-2', 2, B, 'unverified', 'the check timed out twice'),
  ];

  it('each story with its verdict, the checks of that verdict, its commit and the rejections along the way', () => {
    const body = renderPrBody({
      loopId: 'L',
      prd: plan([
        story('US-1', true),
        story('US-2', false),
        story('US-3', false),
        story('US-4', false, { skip: true }),
      ]),
      ledger,
      pinnedChanges: [],
    });
    expect(body).toContain('**1/3 stories verified**');
    expect(body).toContain(
      `- \`US-1\` Title US-1: **verified** at ${B.slice(0, 12)}\n  - check \`npm test\`: passed\n  - rejected 1 time along the way; the last: check npm test exited 1`,
    );
    expect(body).toContain(
      `- \`US-2\` Title US-2: **unverified** at ${B.slice(0, 12)}\n  - the check timed out twice\n  - check \`npm run e2e\`: exit 1`,
    );
    expect(body).toContain('- `US-3` Title US-3: **not verified yet**');
    expect(body).toContain('Set aside by the plan (not worked on): `US-4`');
    expect(body).toContain('None: the branch changes no pinned test file.');
    expect(body).toContain('`ralph/.runs/L/ledger.jsonl`');
  });

  it('a verified line the plan does not back (passes not true) reads as unverified', () => {
    const body = renderPrBody({ loopId: 'L', prd: plan([story('US-1', false)]), ledger, pinnedChanges: null });
    expect(body).toContain('`US-1` Title US-1: **unverified**');
    expect(body).toContain('**0/1 stories verified**');
    expect(body).toContain('Not known: the base branch is not in this repository');
  });

  it('lists the pinned files the branch changed', () => {
    const body = renderPrBody({
      loopId: 'L',
      prd: plan([story('US-1', true)]),
      ledger,
      pinnedChanges: ['M test/cart.test.ts', 'D tests/old.py'],
    });
    expect(body).toContain(
      'The branch changes these pinned files (review them before merging):\n- `M test/cart.test.ts`\n- `D tests/old.py`',
    );
  });

  it('lists what the loop changed of its pins since the plan commit, and says pr-merge does not merge it', () => {
    const loopPins = { commit: 'a'.repeat(40), changes: ['M test/cart.test.ts', 'package.json scripts.test'] };
    const body = renderPrBody({ loopId: 'L', prd: plan([story('US-1', true)]), ledger, pinnedChanges: [], loopPins });
    expect(body).toContain(`Changed by the loop since its plan commit \`${'a'.repeat(12)}\``);
    expect(body).toContain('`--deliver pr-merge` does not merge this pull request');
    expect(body).toContain('- `M test/cart.test.ts`\n- `package.json scripts.test`');
    expect(
      renderPrBody({
        loopId: 'L',
        prd: plan([story('US-1', true)]),
        ledger,
        pinnedChanges: [],
        loopPins: { ...loopPins, changes: [] },
      }),
    ).not.toContain('Changed by the loop');
  });

  it('text from the plan cannot mention people, link, or break out of its code span', () => {
    const body = renderPrBody({
      loopId: 'L',
      prd: plan([story('US-`1`', true, { title: '@team <img src=x> [x](http://e)' })]),
      ledger: [],
      pinnedChanges: [],
    });
    expect(body).toContain('- `` US-`1` `` \\@team \\<img src=x\\> \\[x\\](http://e): **not verified yet**');
  });

  it('a branch name with backticks stays in its code span', () => {
    const body = renderPrBody({
      loopId: 'L',
      prd: plan([], { branchName: 'ralph/x`@team <b>`' }),
      ledger: [],
      pinnedChanges: [],
    });
    expect(body).toContain('on `` ralph/x`@team <b>` ``:');
  });

  it('a plan the agent mangled (odd types, null stories) still renders', () => {
    const prd = { branchName: 'ralph/x', userStories: [null, { id: 7, title: 8, passes: 'yes' }] } as unknown as Prd;
    expect(renderPrBody({ loopId: 'L', prd, ledger: [], pinnedChanges: [] })).toContain(
      '- `7` 8: **not verified yet**',
    );
  });
});
