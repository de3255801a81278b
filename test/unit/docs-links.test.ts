// README links into docs/ by file and heading (its long sections moved to docs/guide.md): each link must lead to a
// file that exists and, with a #anchor, to a heading of that file, as GitHub names headings.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.join(import.meta.dirname, '../..');

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchors(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchor(m[1]));
}

describe.each(['README.md', 'docs/guide.md', 'docs/options.md'])('the links of %s', (doc) => {
  const file = path.join(root, doc);
  const links = [...readFileSync(file, 'utf8').matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1])
    .filter((l) => !/^[a-z]+:/.test(l));

  it('lead to files and headings that exist', () => {
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) {
      const [target, hash] = link.split('#');
      const to = target ? path.resolve(path.dirname(file), target) : file;
      expect(existsSync(to), `${doc}: ${link}`).toBe(true);
      if (hash) expect(anchors(to), `${doc}: ${link}`).toContain(hash);
    }
  });
});
