import { describe, expect, it } from 'vitest';
import { appleScriptString, planDesktopNotification } from '../../../../src/engine/deliver/desktop.js';

const found = (name: string) => `/usr/bin/${name}`;
const none = () => null;

describe('planDesktopNotification', () => {
  it.each([
    ['linux', found, { file: '/usr/bin/notify-send', args: ['ralph: done', 'loop a: complete'] }],
    ['freebsd', found, { file: '/usr/bin/notify-send', args: ['ralph: done', 'loop a: complete'] }],
    [
      'darwin',
      found,
      { file: '/usr/bin/osascript', args: ['-e', 'display notification "loop a: complete" with title "ralph: done"'] },
    ],
    ['linux', none, null],
    ['darwin', none, null],
  ] as const)('%s', (platform, find, want) => {
    expect(planDesktopNotification(platform, 'ralph: done', 'loop a: complete', find)).toEqual(want);
  });
});

describe('appleScriptString', () => {
  it.each([
    ['plain', '"plain"'],
    ['say "hi"', '"say \\"hi\\""'],
    ['back\\slash', '"back\\\\slash"'],
    ['" & (do shell script "id") & "', '"\\" & (do shell script \\"id\\") & \\""'],
    ['line\nbreak\ttab', '"line break tab"'],
  ])('%j → %s', (text, want) => {
    expect(appleScriptString(text)).toBe(want);
  });
});
