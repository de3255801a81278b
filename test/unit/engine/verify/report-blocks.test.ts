// The progress.txt blocks the runner writes after an iteration that timed out or worked on another branch.
import { describe, expect, it } from 'vitest';
import {
  renderOffBranchBlock,
  renderOffBranchReason,
  renderTimeoutBlock,
} from '../../../../src/engine/verify/report.js';

const T = new Date('2026-11-30T01:30:00Z');

describe('renderTimeoutBlock', () => {
  it.each([
    [
      'the last 20 lines, fenced',
      Array.from({ length: 25 }, (_, i) => `line ${i + 1}`).join('\n') + '\n',
      ['Its output (last 20 lines):', '```\nline 6\n', 'line 25\n```'],
      ['line 5\n'],
    ],
    ['a fence longer than backticks in the output', 'run ```code```\n', ['````\nrun ```code```\n````'], []],
    ['colour codes stripped', '\u001b[31mred\u001b[0m\n', ['```\nred\n```'], ['\u001b[']],
    ['no output', '', ['It printed nothing.'], ['Its output']],
  ])('%s', (_name, output, present, absent) => {
    const block = renderTimeoutBlock(T, 4, '10m00s', output);
    expect(block.startsWith('\n## 2026-11-30 01:30 UTC - ralph: iteration 4 timed out\n')).toBe(true);
    expect(block).toContain(
      'ralph: iteration 4 timed out after 10m00s; the agent and everything it started were killed.',
    );
    expect(block.endsWith('\n---\n')).toBe(true);
    for (const p of present) expect(block).toContain(p);
    for (const a of absent) expect(block).not.toContain(a);
  });
});

describe('renderOffBranchBlock', () => {
  it.each([
    [
      'with commits',
      ['abc1234 feat: US-1'],
      ['The agent switched from ralph/x to main and committed there:', '- abc1234 feat: US-1'],
    ],
    ['without commits', [], ['The agent switched from ralph/x to main.']],
  ])('%s', (_name, commits, present) => {
    const block = renderOffBranchBlock({ time: T, iteration: 2, branch: 'ralph/x', where: 'main', commits });
    expect(block).toContain('## 2026-11-30 01:30 UTC - ralph: iteration 2 worked on the wrong branch');
    for (const p of present) expect(block).toContain(p);
    expect(block).toContain('Stay on ralph/x');
  });

  it('gives the reason every rejected claim carries', () => {
    expect(renderOffBranchReason('ralph/x', 'a detached HEAD (abc1234)')).toBe(
      'the work is not on ralph/x: the agent committed it on a detached HEAD (abc1234)',
    );
  });
});
