// The only module that imports gray-matter (YAML frontmatter in markdown files).
import matter from 'gray-matter';

export interface ParsedFrontmatter {
  /** The parsed YAML between the `---` fences; undefined when the file has no frontmatter block. */
  data: unknown;
  /** The YAML text exactly as written, without the fences. */
  raw: string;
  /** Everything after the closing fence. */
  body: string;
  hasFrontmatter: boolean;
}

export function parseFrontmatter(text: string): ParsedFrontmatter {
  // Passing an options object bypasses gray-matter's content cache, whose entries are shared and mutable.
  const file = matter(text, {});
  const hasFrontmatter = /^---[ \t]*\r?\n/.test(text) && file.matter !== undefined && text !== file.content;
  return { data: hasFrontmatter ? file.data : undefined, raw: file.matter ?? '', body: file.content, hasFrontmatter };
}

/** YAML lines (each ending in a newline) for a flat record of string fields, quoted where YAML needs it. */
export function renderYamlFields(fields: Record<string, string>): string {
  const doc = matter.stringify('', fields);
  // matter.stringify returns "---\n<yaml>---\n\n"; keep just the YAML lines.
  return doc.replace(/^---\n/, '').replace(/---\n*$/, '');
}
