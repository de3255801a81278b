import { describe, expect, it } from 'vitest';
import { parseJsonWithPositions, type JsonNode } from '../../../src/prd/json-parse.js';
import { makeLocator } from '../../../src/prd/locate.js';

/** The plain value of a node, to compare the parser with JSON.parse. */
function plain(node: JsonNode): unknown {
  if (node.kind === 'array') return node.items.map(plain);
  if (node.kind === 'object') return Object.fromEntries(node.entries.map((e) => [e.key, plain(e.value)]));
  return node.value;
}

describe('parseJsonWithPositions on valid JSON', () => {
  it.each([
    ['{}'],
    ['[]'],
    ['  {"a": [1, -2.5, 3e2, 0, -0.0, 1E-3], "b": {"c": null, "d": true, "e": false}}  '],
    ['"just a string"'],
    ['{"esc": "q\\" b\\\\ s\\/ \\b\\f\\n\\r\\t u\\u00e9\\uD83D\\uDE00 end"}'],
    ['{"unicode": "héllo ✓ 😀", "empty": "", "nested": [[[]], [{}]]}'],
    ['{\r\n  "crlf": 1\r\n}\r\n'],
    ['{"big": 1e400, "tiny": 5e-400, "__proto__": {"x": 1}}'],
  ])('reads %j as JSON.parse does', (text) => {
    const result = parseJsonWithPositions(text);
    expect(result.ok).toBe(true);
    if (result.ok) expect(plain(result.root)).toEqual(JSON.parse(text));
  });

  it('records where every key and value starts', () => {
    const text = '{\n  "a": [true,\n    "x"],\n  "b": -1\n}';
    const result = parseJsonWithPositions(text);
    if (!result.ok) throw new Error('expected valid JSON');
    const root = result.root as Extract<JsonNode, { kind: 'object' }>;
    const [a, b] = root.entries;
    expect(text.slice(a.keyOffset, a.keyOffset + 3)).toBe('"a"');
    expect(text[a.value.offset]).toBe('[');
    const items = (a.value as Extract<JsonNode, { kind: 'array' }>).items;
    expect(text.slice(items[1].offset, items[1].offset + 3)).toBe('"x"');
    expect(text.slice(b.value.offset, b.value.offset + 2)).toBe('-1');
  });
});

describe('parseJsonWithPositions on broken JSON', () => {
  // [what, text, the text at the reported offset, part of the message]
  it.each([
    ['empty file', '', '', 'the file is empty'],
    ['only whitespace', '  \n ', '', 'the file is empty'],
    ['trailing comma in an object', '{"a": 1,\n}', ',', 'trailing comma'],
    ['trailing comma in an array', '[1, 2, ]', ',', 'trailing comma'],
    ['missing comma between properties', '{"a": 1\n "b": 2}', '"b"', "missing ','"],
    ['missing comma between items', '[1 2]', '2', "missing ','"],
    ['single-quoted string', "{'a': 1}", "'a'", 'double quotes'],
    ['single-quoted value', '{"a": \'x\'}', "'x'", 'double quotes'],
    ['unquoted key', '{a: 1}', 'a', 'double quotes'],
    ['missing colon', '{"a" 1}', '1', "expected ':'"],
    ['unterminated string', '{"a": "abc', '"abc', 'unterminated string'],
    ['newline inside a string', '{"a": "ab\ncd"}', '"ab', 'cannot span lines'],
    ['tab inside a string', '{"a": "a\tb"}', '\t', 'control character U+0009'],
    ['bad escape', '{"a": "\\x"}', '\\x', "invalid escape '\\x'"],
    ['short unicode escape', '{"a": "\\u12"}', '\\u12', 'invalid escape'],
    ['leading zero', '{"a": 01}', '01', "invalid number '01'"],
    ['bare minus', '[-]', '-', 'invalid number'],
    ['trailing dot', '[1.]', '1.', "invalid number '1.'"],
    ['word instead of value', '{"a": yes}', 'yes', "unexpected 'yes'"],
    ['Python literal', '{"a": True}', 'True', "unexpected 'True'"],
    ['NaN', '[NaN]', 'NaN', "unexpected 'NaN'"],
    ['line comment', '{\n  // note\n  "a": 1}', '//', 'comments are not allowed'],
    ['block comment', '{"a": 1 /* x */}', '/*', 'comments are not allowed'],
    ['two documents', '{} {}', '{', 'after the end of the JSON document'],
    ['missing closing brace', '{"a": 1', '', "unexpected end of file; expected ',' or '}'"],
    ['missing closing bracket', '[1, 2', '', "expected ',' or ']'"],
    ['value missing after colon', '{"a": }', '}', 'expected a value'],
    ['empty slot in an array', '[1,,2]', ',', 'expected a value'],
    ['stray closing bracket', '{"a": 1]', ']', "expected ',' or '}'"],
  ])('%s', (_what, text, at, message) => {
    const result = parseJsonWithPositions(text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.message).toContain(message);
    expect(text.slice(result.error.offset, result.error.offset + at.length)).toBe(at);
    // Whatever we reject, JSON.parse rejects too: the validator never refuses a plan the engine could read.
    expect(() => JSON.parse(text)).toThrow();
  });

  it('refuses nesting deep enough to threaten the stack, with a message', () => {
    const result = parseJsonWithPositions(`${'['.repeat(600)}${']'.repeat(600)}`);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.message).toMatch(/nested more than \d+ levels/);
  });
});

describe('makeLocator', () => {
  it.each([
    ['a\nbc\nd', 0, 1, 1],
    ['a\nbc\nd', 2, 2, 1],
    ['a\nbc\nd', 3, 2, 2],
    ['a\nbc\nd', 5, 3, 1],
    ['a\r\nbc', 3, 2, 1],
    ['a\r\nbc', 4, 2, 2],
    ['a\rbc', 2, 2, 1],
    ['', 0, 1, 1],
  ])('in %j offset %i is line %i col %i', (text, offset, line, col) => {
    expect(makeLocator(text)(offset)).toEqual({ line, col });
  });
});

describe('parseJsonWithPositions agrees with JSON.parse on damaged text', () => {
  const SOURCE = JSON.stringify({ a: [1, -2.5e3, true, null, 'x\ny "q"'], b: { c: '', d: [[], {}] }, é: 0 }, null, 2);
  const PIECES = ['', ',', '"', '{', '}', '[', ']', ':', '\\', '0', '-', '.', 'e', 't', ' ', '\n', '\\u00', "'"];

  // A fixed seed: the same 500 damaged texts on every run, so a failure can be reproduced.
  function* damaged(count: number): Generator<string> {
    let seed = 42;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let i = 0; i < count; i++) {
      const at = random(SOURCE.length);
      const cut = random(3);
      yield SOURCE.slice(0, at) + PIECES[random(PIECES.length)] + SOURCE.slice(at + cut);
    }
  }

  it('accepts exactly the texts JSON.parse accepts, with the same value', () => {
    for (const text of damaged(500)) {
      let expected: unknown;
      let parses = true;
      try {
        expected = JSON.parse(text);
      } catch {
        parses = false;
      }
      const result = parseJsonWithPositions(text);
      expect(result.ok, text).toBe(parses);
      if (result.ok) expect(plain(result.root)).toEqual(expected);
    }
  });
});
