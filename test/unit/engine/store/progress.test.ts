// progress.txt compaction and archive naming, as pure functions.
import { describe, expect, it } from 'vitest';
import {
  planCompaction,
  planArchiveDir,
  renderProgressHeader,
  hasEntries,
  readPatterns,
} from '../../../../src/engine/store/progress.js';

const header = '# Progress log\n\n## Codebase Patterns\n- run npm test\n\n## Sessions\nAppend below.\n---\n';
const entry = (n: number, size = 100) => `## 2026-01-0${n % 9} - US-${n}: story\n${'x'.repeat(size)}\n---\n`;

describe('planCompaction', () => {
  it('leaves a log within the limit alone', () => {
    expect(planCompaction(header + entry(1), 1000)).toBeNull();
  });

  it('keeps the preamble, Codebase Patterns and the newest entries; moves the oldest', () => {
    const entries = Array.from({ length: 20 }, (_, i) => entry(i + 1));
    const plan = planCompaction(header + entries.join(''), 1000)!;
    expect(plan.kept.startsWith(header)).toBe(true);
    expect(plan.kept.endsWith(entries[19])).toBe(true);
    expect(Buffer.byteLength(plan.kept)).toBeLessThanOrEqual(1000);
    expect(plan.moved.startsWith(entries[0])).toBe(true);
    expect(plan.kept + plan.moved).toHaveLength((header + entries.join('')).length);
    expect(plan.moved).not.toContain('Codebase Patterns');
  });

  it('always keeps the newest entry, however large', () => {
    const plan = planCompaction(header + entry(1) + entry(2, 5000), 1000)!;
    expect(plan.kept).toBe(header + entry(2, 5000));
    expect(plan.moved).toBe(entry(1));
  });

  it('starts a fresh log with the sections the prompt expects', () => {
    const text = renderProgressHeader(new Date('2026-01-01T00:00:00Z'));
    expect(text).toMatch(/^# Progress log\n/);
    expect(text).toContain('## Codebase Patterns');
    expect(text).toContain('## Sessions');
  });
});

describe('planArchiveDir', () => {
  it.each([
    ['ralph/task-priority', 'ralph/archive/2026-03-04-task-priority'],
    ['feature/x', 'ralph/archive/2026-03-04-feature-x'],
  ])('%s → %s', (branch, dir) => {
    expect(planArchiveDir('ralph', branch, new Date('2026-03-04T12:00:00Z'))).toBe(dir);
  });
});

describe('hasEntries and readPatterns', () => {
  it.each([
    [header, false, '- run npm test'],
    [header + entry(1), true, '- run npm test'],
    ['# Progress log\n', false, null],
  ])('%#', (text, entries, patterns) => {
    expect(hasEntries(text)).toBe(entries);
    expect(readPatterns(text)).toBe(patterns);
  });
});
