import { createHash } from 'node:crypto';

/** sha256 of the content with CRLF turned into LF, so a checkout with autocrlf still counts as pristine. */
export function hashContent(content: Buffer | string): string {
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  // latin1 maps bytes to characters one to one, so non-UTF-8 content hashes safely too.
  const normalised = bytes.toString('latin1').replace(/\r\n/g, '\n');
  return createHash('sha256').update(Buffer.from(normalised, 'latin1')).digest('hex');
}
