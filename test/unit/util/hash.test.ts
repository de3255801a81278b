import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashContent } from '../../../src/util/hash.js';

const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');

describe('hashContent', () => {
  it('is the sha256 of the bytes when they hold no CR, a string hashed as UTF-8', () => {
    expect(hashContent('héllo\nworld\n')).toBe(sha(Buffer.from('héllo\nworld\n', 'utf8')));
    expect(hashContent(Buffer.from([0xff, 0x00, 0x0a]))).toBe(sha(Buffer.from([0xff, 0x00, 0x0a])));
  });

  it('counts CRLF as LF (a checkout with autocrlf is pristine), leaves a lone CR, and keeps bytes that are not UTF-8', () => {
    expect(hashContent('a\r\nb\r\n')).toBe(sha('a\nb\n'));
    expect(hashContent('a\rb\r\n')).toBe(sha('a\rb\n'));
    expect(hashContent(Buffer.from([0xff, 0x0d, 0x0a, 0x80]))).toBe(sha(Buffer.from([0xff, 0x0a, 0x80])));
  });
});
