import { describe, expect, it } from 'vitest';
import { LineSplitter, TextTail } from '../../../../src/engine/agents/tail.js';

function tailOf(max: number, chunks: string[]): { text: string; cut: boolean } {
  const tail = new TextTail(max);
  for (const c of chunks) tail.push(c);
  return { text: tail.text(), cut: tail.cut };
}

describe('TextTail', () => {
  it.each([
    ['nothing', 8, [], '', false],
    ['less than the bound', 8, ['ab', 'cd'], 'abcd', false],
    ['exactly the bound', 8, ['abcd', 'efgh'], 'abcdefgh', false],
    ['past the bound, chunk by chunk', 8, ['abcd', 'efgh', 'ij'], 'cdefghij', true],
    ['wrapping round several times', 5, ['abc', 'def', 'ghi', 'jkl', 'm'], 'ijklm', true],
    ['one chunk larger than the bound', 4, ['ab', 'cdefghij'], 'ghij', true],
    ['one chunk larger than the bound, at the start of the ring', 4, ['abcdefgh'], 'efgh', true],
    ['many one-character chunks', 3, [...'abcdefghij'], 'hij', true],
  ])('%s', (_name, max, chunks, text, cut) => {
    expect(tailOf(max, chunks)).toEqual({ text, cut });
  });

  it('drops a character the cut split in two instead of showing a replacement character', () => {
    // "é" is two bytes in UTF-8; a 2-byte tail of "aéb" starts inside it.
    expect(tailOf(2, ['aé', 'b'])).toEqual({ text: 'b', cut: true });
    expect(tailOf(3, ['aé', 'b'])).toEqual({ text: 'éb', cut: true });
  });

  it('keeps the completion tag at the end of a long output', () => {
    const tail = new TextTail(1024);
    for (let i = 0; i < 10_000; i++) tail.push('x'.repeat(100) + '\n');
    tail.push('Done.\n<promise>COMPLETE</promise>\n');
    expect(tail.text().endsWith('Done.\n<promise>COMPLETE</promise>\n')).toBe(true);
    expect(tail.text()).toHaveLength(1024);
  });
});

function split(max: number, chunks: string[]): { lines: string[]; skipped: number } {
  const lines: string[] = [];
  const splitter = new LineSplitter(max, (l) => lines.push(l));
  for (const c of chunks) splitter.push(c);
  splitter.end();
  return { lines, skipped: splitter.skipped };
}

describe('LineSplitter', () => {
  it.each([
    ['lines in one chunk', ['a\nb\n'], ['a', 'b'], 0],
    ['a line across chunks', ['ab', 'c', 'd\ne\n'], ['abcd', 'e'], 0],
    ['a last line without a newline', ['a\nb'], ['a', 'b'], 0],
    ['empty lines', ['\n\na\n'], ['', '', 'a'], 0],
    ['a line longer than the bound, skipped to its newline', ['ok\nxxx', 'xxxx', 'x\nafter\n'], ['ok', 'after'], 1],
    ['an endless last line', ['ok\n', 'y'.repeat(20), 'y'.repeat(20)], ['ok'], 1],
    ['a line exactly at the bound', ['12345\n'], ['12345'], 0],
  ])('%s', (_name, chunks, lines, skipped) => {
    expect(split(5, chunks)).toEqual({ lines, skipped });
  });
});
