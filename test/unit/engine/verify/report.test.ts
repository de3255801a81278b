import { describe, expect, it } from 'vitest';
import {
  applyRunnerNote,
  renderCheckFailure,
  renderOutOfOrder,
  renderRejectionBlock,
  renderRestoreBlock,
  renderUncommitted,
  renderUncheckedWarning,
  tailLines,
} from '../../../../src/engine/verify/report.js';
import { stripAnsi } from '../../../../src/util/ansi.js';
import type { CheckResult } from '../../../../src/engine/verify/checks.js';

const check = (extra: Partial<CheckResult>): CheckResult => ({
  command: 'npm test',
  exitCode: 1,
  signal: null,
  timedOut: false,
  ok: false,
  durationMs: 5,
  outputTail: '',
  outputSha256: 'x',
  ...extra,
});

describe('applyRunnerNote', () => {
  it.each<[string | undefined, string | null, string]>([
    [undefined, 'rejected: x', '[ralph] rejected: x'],
    ['', 'rejected: x', '[ralph] rejected: x'],
    ['my own note', 'rejected: x', 'my own note\n[ralph] rejected: x'],
    ['my own note\n[ralph] rejected: old', 'rejected: new', 'my own note\n[ralph] rejected: new'],
    ['[ralph] rejected: old\nagent line after', 'rejected: new', 'agent line after\n[ralph] rejected: new'],
    ['my own note\n[ralph] rejected: old', null, 'my own note'],
    ['[ralph] rejected: old', null, ''],
  ])('%j + %j → %j', (notes, note, expected) => {
    expect(applyRunnerNote(notes, note)).toBe(expected);
  });
});

describe('renderCheckFailure', () => {
  it.each<[Partial<CheckResult>, string]>([
    [{ exitCode: 1 }, 'check `npm test` exited 1'],
    [{ exitCode: null, timedOut: true, signal: 'SIGTERM' }, 'check `npm test` timed out after 10s and was killed'],
    [{ exitCode: null, signal: 'SIGSEGV' }, 'check `npm test` was killed by SIGSEGV'],
    [{ exitCode: null, error: 'spawn sh ENOENT' }, 'check `npm test` could not start: spawn sh ENOENT'],
  ])('%j → %s', (r, text) => {
    expect(renderCheckFailure(check(r), 10_000)).toBe(text);
  });

  it('names a timeout under a second in milliseconds', () => {
    expect(renderCheckFailure(check({ exitCode: null, timedOut: true, signal: 'SIGTERM' }), 300)).toBe(
      'check `npm test` timed out after 300ms and was killed',
    );
  });
});

describe('renderOutOfOrder', () => {
  it.each([
    [
      ['US-1'],
      'out of order: it depends on US-1, which does not pass yet; finish that story first, then claim this one again',
    ],
    [
      ['US-1', 'US-2', 'US-3'],
      'out of order: it depends on US-1, US-2 and US-3, which do not pass yet; finish those stories first, then claim this one again',
    ],
  ])('%j', (unmet, text) => {
    expect(renderOutOfOrder(unmet)).toBe(text);
  });
});

describe('renderUncommitted', () => {
  it.each([
    [['a.ts'], /\(a\.ts\); commit your work/],
    [Array.from({ length: 12 }, (_, i) => `f${i}`), /f9, and 2 more\)/],
  ])('%j', (paths, re) => {
    expect(renderUncommitted(paths)).toMatch(re);
  });
});

describe('tailLines', () => {
  it.each<[string, number, string]>([
    ['a\nb\nc\n', 2, 'b\nc'],
    ['a\r\nb\r\n', 5, 'a\nb'],
    ['\u001b[31mred\u001b[0m\n', 5, 'red'],
    [
      Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n'),
      40,
      Array.from({ length: 40 }, (_, i) => `line ${i + 60}`).join('\n'),
    ],
  ])('%j (last %d)', (text, n, expected) => {
    expect(tailLines(text, n)).toBe(expected);
  });

  it('bounds one huge line', () => {
    expect(tailLines('x'.repeat(100_000), 40).length).toBeLessThanOrEqual(8001);
  });
});

describe('stripAnsi', () => {
  it.each([
    ['\u001b[1m\u001b[32m✓\u001b[39m\u001b[22m ok', '✓ ok'],
    ['\u001b]0;title\u0007text', 'text'],
  ])('%j', (raw, clean) => expect(stripAnsi(raw)).toBe(clean));
});

describe('renderRejectionBlock', () => {
  const time = new Date('2026-01-02T03:04:05Z');
  it('names the command, exit code and the last 40 lines of output', () => {
    const output = Array.from({ length: 50 }, (_, i) => `out ${i}`).join('\n') + '\n';
    const text = renderRejectionBlock({
      time,
      iteration: 3,
      storyId: 'US-1',
      title: 'Login',
      commit: 'abc',
      reason: 'check `npm test` exited 1',
      check: check({ outputTail: output }),
    });
    expect(text).toContain('## 2026-01-02 03:04 UTC - ralph: US-1 rejected (iteration 3)');
    expect(text).toContain('Command: npm test\nExit code: 1\nOutput (last 40 lines):\n```\nout 10\n');
    expect(text).toContain('out 49\n```\n');
    expect(text).not.toContain('out 9\n');
  });

  it('fences output that itself contains a fence', () => {
    const text = renderRejectionBlock({
      time,
      iteration: 1,
      storyId: 'US-1',
      commit: null,
      reason: 'r',
      check: check({ outputTail: '```\ncode\n```' }),
    });
    expect(text).toContain('````\n```\ncode\n```\n````');
  });

  it('says when a timed-out command has no exit code', () => {
    const text = renderRejectionBlock({
      time,
      iteration: 1,
      storyId: 'US-1',
      commit: null,
      reason: 'r',
      check: check({ exitCode: null, timedOut: true }),
    });
    expect(text).toContain('Exit code: none (timed out)');
  });

  it.each([
    [0, 'ralph: US-1 rejected (at start)'],
    [2, 'ralph: US-1 rejected (iteration 2)'],
  ])('names iteration %i in its heading as %j', (iteration, heading) => {
    expect(renderRejectionBlock({ time, iteration, storyId: 'US-1', commit: null, reason: 'r' })).toContain(
      `## 2026-01-02 03:04 UTC - ${heading}\n`,
    );
  });

  it('has no command section for uncommitted work', () => {
    const text = renderRejectionBlock({
      time,
      iteration: 1,
      storyId: 'US-1',
      commit: 'abc',
      reason: renderUncommitted(['a.ts']),
    });
    expect(text).toContain('Reason: uncommitted changes in the working tree (a.ts)');
    expect(text).not.toContain('Command:');
  });
});

describe('renderRestoreBlock', () => {
  it('lists every undone edit', () => {
    const text = renderRestoreBlock(new Date(0), 2, [
      'story US-2 was deleted; restored',
      'top-level field "checks" was changed; restored',
    ]);
    expect(text).toContain('- story US-2 was deleted; restored\n- top-level field "checks" was changed; restored\n');
    expect(text).toContain('ralph: prd.json restored (iteration 2)');
    expect(renderRestoreBlock(new Date(0), 0, ['x'])).toContain('ralph: prd.json restored (at start)');
  });
});

describe('renderUncheckedWarning', () => {
  const s = (id: string, checks?: string[]) => ({
    id,
    title: id,
    acceptanceCriteria: [],
    priority: 1,
    passes: false,
    ...(checks ? { checks } : {}),
  });
  it.each<[string, string[] | undefined, ReturnType<typeof s>[], RegExp | null]>([
    ['plan checks cover everything', ['npm test'], [s('A'), s('B')], null],
    ['every story has its own', undefined, [s('A', ['x']), s('B', ['y'])], null],
    ['empty plan checks, stories covered', [], [s('A', ['x'])], null],
    [
      'no checks anywhere',
      undefined,
      [s('A'), s('B')],
      /^the plan has no checks: stories will be accepted on the agent's word and marked unverified/,
    ],
    ['one story uncovered', [], [s('A', ['x']), s('B')], /^B has no checks: it will be accepted/],
    ['two stories uncovered', undefined, [s('A'), s('B'), s('C', ['x'])], /^A, B have no checks: they will be/],
  ])('%s', (_name, checks, userStories, expected) => {
    const text = renderUncheckedWarning({ branchName: 'b', ...(checks ? { checks } : {}), userStories });
    if (expected === null) expect(text).toBeNull();
    else expect(text).toMatch(expected);
  });
});
