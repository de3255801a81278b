import { describe, expect, it } from 'vitest';
import { nextFence, parseBlocks, parseProgress } from '../../../src/view/progress-log.js';

describe('parseProgress', () => {
  it('pins Codebase Patterns, folds the Sessions intro into the preamble, keeps entries in file order', () => {
    const log = parseProgress('# Progress log\nStarted: today\n\n## Codebase Patterns\n- use X\n\n## Sessions\nAppend only.\n---\n## 2026-11-29 - US-001\n- did A\n---\n## 2026-11-29 10:41 UTC - ralph: US-002 rejected (iteration 2)\nReason: tests failed\n');
    expect(log.preamble).toEqual([{ kind: 'heading', text: 'Progress log' }, { kind: 'text', text: 'Started: today' }, { kind: 'text', text: 'Append only.' }]);
    expect(log.patterns).toEqual({ title: 'Codebase Patterns', runner: false, blocks: [{ kind: 'list', items: [{ text: 'use X', depth: 0 }] }] });
    expect(log.sections.map((s) => [s.title, s.runner])).toEqual([
      ['2026-11-29 - US-001', false],
      ['2026-11-29 10:41 UTC - ralph: US-002 rejected (iteration 2)', true],
    ]);
  });

  it.each([
    ['an empty file', '', { preamble: [], patterns: null, sections: [] }],
    ['CRLF line endings', '## A\r\n- x\r\n', { preamble: [], patterns: null, sections: [{ title: 'A', runner: false, blocks: [{ kind: 'list', items: [{ text: 'x', depth: 0 }] }] }] }],
    ['a `## ` line inside a code fence is not a heading', '## A\n```\n## not a heading\n```\n', { preamble: [], patterns: null, sections: [{ title: 'A', runner: false, blocks: [{ kind: 'code', text: '## not a heading' }] }] }],
    ['a longer fence holds a shorter one', '## A\n````\n```\n## still code\n````\n', { preamble: [], patterns: null, sections: [{ title: 'A', runner: false, blocks: [{ kind: 'code', text: '```\n## still code' }] }] }],
  ])('%s', (_name, text, expected) => {
    expect(parseProgress(text)).toEqual(expected);
  });
});

describe('nextFence', () => {
  it.each([
    [null, 'text', null],
    [null, '```', '```'],
    [null, '```js', '```'],
    ['```', '```', null],
    ['````', '```', '````'],
    ['```', '````', null],
    ['```', '```js', '```'], // an info string never closes a fence
  ])('%j then %j → %j', (fence, line, expected) => {
    expect(nextFence(fence, line)).toBe(expected);
  });
});

describe('parseBlocks', () => {
  it.each([
    ['nested list items by indentation', ['- a', '  - b', '    - c'], [{ kind: 'list', items: [{ text: 'a', depth: 0 }, { text: 'b', depth: 1 }, { text: 'c', depth: 2 }] }]],
    ['a wrapped list item joins its item', ['- long', '    continued'], [{ kind: 'list', items: [{ text: 'long continued', depth: 0 }] }]],
    ['indented lines after text are code', ['Exit code: 1', '', '    FAIL x', '    at y'], [{ kind: 'text', text: 'Exit code: 1' }, { kind: 'code', text: 'FAIL x\nat y' }]],
    ['consecutive text lines are one paragraph', ['a', 'b', '', 'c'], [{ kind: 'text', text: 'a\nb' }, { kind: 'text', text: 'c' }]],
    ['an unterminated fence still shows its text', ['```', 'tail'], [{ kind: 'code', text: 'tail' }]],
    ['rules vanish', ['---', '***'], []],
    ['headings', ['### Learnings'], [{ kind: 'heading', text: 'Learnings' }]],
    ['markup is kept as text, never interpreted', ['<img src=x onerror=alert(1)>'], [{ kind: 'text', text: '<img src=x onerror=alert(1)>' }]],
  ])('%s', (_name, lines, expected) => {
    expect(parseBlocks(lines)).toEqual(expected);
  });
});
