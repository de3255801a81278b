import { describe, expect, it } from 'vitest';
import {
  nextFence,
  parseBlocks,
  parseProgress,
  parseProgressEnds,
  sectionStart,
} from '../../../src/view/progress-log.js';

describe('parseProgress', () => {
  it('pins Codebase Patterns, folds the Sessions intro into the preamble, keeps entries in file order', () => {
    const log = parseProgress(
      '# Progress log\nStarted: today\n\n## Codebase Patterns\n- use X\n\n## Sessions\nAppend only.\n---\n## 2026-11-29 - US-001\n- did A\n---\n## 2026-11-29 10:41 UTC - ralph: US-002 rejected (iteration 2)\nReason: tests failed\n',
    );
    expect(log.preamble).toEqual([
      { kind: 'heading', text: 'Progress log' },
      { kind: 'text', text: 'Started: today' },
      { kind: 'text', text: 'Append only.' },
    ]);
    expect(log.patterns).toEqual({
      title: 'Codebase Patterns',
      runner: false,
      blocks: [{ kind: 'list', items: [{ text: 'use X', depth: 0 }] }],
    });
    expect(log.sections.map((s) => [s.title, s.runner])).toEqual([
      ['2026-11-29 - US-001', false],
      ['2026-11-29 10:41 UTC - ralph: US-002 rejected (iteration 2)', true],
    ]);
  });

  it.each([
    ['an empty file', '', { preamble: [], patterns: null, sections: [] }],
    [
      'CRLF line endings',
      '## A\r\n- x\r\n',
      {
        preamble: [],
        patterns: null,
        sections: [{ title: 'A', runner: false, blocks: [{ kind: 'list', items: [{ text: 'x', depth: 0 }] }] }],
      },
    ],
    [
      'a `## ` line inside a code fence is not a heading',
      '## A\n```\n## not a heading\n```\n',
      {
        preamble: [],
        patterns: null,
        sections: [{ title: 'A', runner: false, blocks: [{ kind: 'code', text: '## not a heading' }] }],
      },
    ],
    [
      'a longer fence holds a shorter one',
      '## A\n````\n```\n## still code\n````\n',
      {
        preamble: [],
        patterns: null,
        sections: [{ title: 'A', runner: false, blocks: [{ kind: 'code', text: '```\n## still code' }] }],
      },
    ],
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
    [
      'nested list items by indentation',
      ['- a', '  - b', '    - c'],
      [
        {
          kind: 'list',
          items: [
            { text: 'a', depth: 0 },
            { text: 'b', depth: 1 },
            { text: 'c', depth: 2 },
          ],
        },
      ],
    ],
    [
      'a wrapped list item joins its item',
      ['- long', '    continued'],
      [{ kind: 'list', items: [{ text: 'long continued', depth: 0 }] }],
    ],
    [
      'indented lines after text are code',
      ['Exit code: 1', '', '    FAIL x', '    at y'],
      [
        { kind: 'text', text: 'Exit code: 1' },
        { kind: 'code', text: 'FAIL x\nat y' },
      ],
    ],
    [
      'consecutive text lines are one paragraph',
      ['a', 'b', '', 'c'],
      [
        { kind: 'text', text: 'a\nb' },
        { kind: 'text', text: 'c' },
      ],
    ],
    ['an unterminated fence still shows its text', ['```', 'tail'], [{ kind: 'code', text: 'tail' }]],
    ['rules vanish', ['---', '***'], []],
    ['headings', ['### Learnings'], [{ kind: 'heading', text: 'Learnings' }]],
    [
      'markup is kept as text, never interpreted',
      ['<img src=x onerror=alert(1)>'],
      [{ kind: 'text', text: '<img src=x onerror=alert(1)>' }],
    ],
  ])('%s', (_name, lines, expected) => {
    expect(parseBlocks(lines)).toEqual(expected);
  });
});

describe('sectionStart: where a tail cut from the middle of the log starts', () => {
  it.each([
    ['the tail starts on a heading', '## B\n- x\n', 0],
    ['the rest of an older entry comes first', '- end of A\n## B\n- x\n', 11],
    ['no heading at all', '- one long entry\n- more\n', -1],
    ['a `## ` line inside a fence that the tail cut open is skipped', 'out\n## quoted\n```\n## B\n- x\n', 18],
    ['a fence still open at the end of the file does not push the start further', '## B\n```\nstill writing\n', 0],
  ])('%s', (_name, tail, expected) => {
    expect(sectionStart(tail)).toBe(expected);
  });
});

describe('parseProgressEnds', () => {
  it('takes the title and pinned patterns from the head and the newest whole sections from the tail', () => {
    const head =
      '# Progress log\n## Codebase Patterns\n- use X\n## Sessions\nAppend only.\n## 2026-11-01 - US-001\n- old\n';
    const { log, skipped } = parseProgressEnds(head, 'of an old entry\n## 2026-11-29 - US-009\n- new\n');
    expect(log.preamble).toEqual([
      { kind: 'heading', text: 'Progress log' },
      { kind: 'text', text: 'Append only.' },
    ]);
    expect(log.patterns?.blocks).toEqual([{ kind: 'list', items: [{ text: 'use X', depth: 0 }] }]);
    expect(log.sections.map((s) => s.title)).toEqual(['2026-11-29 - US-009']);
    expect(skipped).toBe('of an old entry\n'.length);
  });

  it('shows a tail without any heading as the end of one entry', () => {
    const { log, skipped } = parseProgressEnds('# Log\n', '- line 9000\n- line 9001\n');
    expect(log.sections).toEqual([
      {
        title: '… (the start of this entry is not shown)',
        runner: false,
        blocks: [
          {
            kind: 'list',
            items: [
              { text: 'line 9000', depth: 0 },
              { text: 'line 9001', depth: 0 },
            ],
          },
        ],
      },
    ]);
    expect(skipped).toBe(0);
  });
});
