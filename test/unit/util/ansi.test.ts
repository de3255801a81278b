// What may reach a terminal from an agent, a check or a plan: no escape sequence, control or bidi character
// survives sanitizeForTerminal, and honest text (tabs, newlines, Unicode) is left exactly as it was.
import { describe, expect, it } from 'vitest';
import { renderTerminalJson, sanitizeForTerminal } from '../../../src/util/ansi.js';
import { random as seeded } from '../../support/random.js';

const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe('sanitizeForTerminal', () => {
  it.each([
    ['OSC 52 (clipboard write) ended by BEL', 'a\x1b]52;c;aGk=\x07b', 'ab'],
    ['OSC 52 ended by ESC \\ (ST)', 'a\x1b]52;c;aGk=\x1b\\b', 'ab'],
    ['OSC 52 in its 8-bit form, ended by C1 ST', 'a\x9d52;c;aGk=\x9cb', 'ab'],
    ['OSC 8 hyperlink around text', '\x1b]8;;https://evil.example\x07click\x1b]8;;\x07', 'click'],
    ['an 8-bit CSI (C1 0x9b)', 'a\x9b31mb', 'ab'],
    ['CSI: clear the screen, move the cursor', '\x1b[2J\x1b[1;1Hx', 'x'],
    ['DCS string', 'a\x1bPq#0;2;0;0;0\x1b\\b', 'ab'],
    ['a two-byte ESC sequence (save cursor) and a charset switch', 'a\x1b7b\x1b(0c', 'abc'],
    ['an unterminated OSC: the introducer goes, the rest is inert text', 'a\x1b]52;c;xx', 'a52;c;xx'],
    ['a carriage return that would overwrite the line', 'all checks pass\rFAILED', 'all checks passFAILED'],
    ['CRLF becomes LF', 'one\r\ntwo', 'one\ntwo'],
    ['BEL, backspace, NUL, DEL', 'a\x07b\x08c\x00d\x7f', 'abcd'],
    ['a bidi override and isolate', 'US-001\u202eevil\u2066x\u2069', 'US-001evilx'],
  ])('%s', (_name, text, shown) => {
    expect(sanitizeForTerminal(text)).toBe(shown);
  });

  it.each([
    ['plain text', 'ralph: iteration 3 done · new commit'],
    ['tabs, newlines and Unicode', 'tab\there\nnew line ünïcödé ✓ ━━ ∞ 日本 🙂'],
    ['an empty string', ''],
  ])('leaves %s exactly as it was', (_name, text) => {
    expect(sanitizeForTerminal(text)).toBe(text);
  });

  it('leaves nothing a terminal acts on, whatever the bytes (1000 random strings)', () => {
    const random = seeded(13);
    const alphabet = [
      '\x1b',
      '\x9b',
      '\x9d',
      '\x9c',
      '\x07',
      '\\',
      ']',
      '[',
      '5',
      '2',
      ';',
      'c',
      'm',
      'P',
      '\r',
      '\n',
      '\t',
      'a',
      '\u202e',
      '\x90',
      '\x00',
      '\x7f',
      'é',
    ];
    for (let i = 0; i < 1000; i++) {
      const text = Array.from(
        { length: 1 + Math.floor(random() * 40) },
        () => alphabet[Math.floor(random() * alphabet.length)],
      ).join('');
      const shown = sanitizeForTerminal(text);
      expect(shown, JSON.stringify(text)).not.toMatch(UNSAFE);
      expect(sanitizeForTerminal(shown)).toBe(shown);
    }
  });
});

describe('renderTerminalJson', () => {
  it('escapes C1, DEL and bidi controls that JSON.stringify leaves raw, and parses back to the same value', () => {
    const value = { title: 'a\x9b31m\u202eb\x1b]52;c;x\x07\x7f', n: 1 };
    const text = renderTerminalJson(value, 2);
    expect(text).not.toMatch(UNSAFE);
    expect(JSON.parse(text)).toEqual(value);
    expect(renderTerminalJson({ a: 'plain ✓' })).toBe(JSON.stringify({ a: 'plain ✓' }));
  });
});
