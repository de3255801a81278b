import { createHash } from 'node:crypto';

const CR = 0x0d;

/** sha256 of the content with CRLF turned into LF, so a checkout with autocrlf still counts as pristine. */
export function hashContent(content: Buffer | string): string {
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  // Most content has no CR at all (the engine, 0.7 MB, every install): hashed as it is, without a copy.
  if (!bytes.includes(CR)) return createHash('sha256').update(bytes).digest('hex');
  // latin1 maps bytes to characters one to one, so non-UTF-8 content hashes safely too.
  const normalised = bytes.toString('latin1').replace(/\r\n/g, '\n');
  return createHash('sha256').update(Buffer.from(normalised, 'latin1')).digest('hex');
}
