// Turns a user's markdown file into a valid SKILL.md (SPEC §3): missing `name` and `description`
// are filled in, existing fields are kept byte for byte, and the result must pass the Agent Skills rules.
import path from 'node:path';
import { parseFrontmatter, renderYamlFields } from '../util/frontmatter.js';
import { toSkillName } from '../util/case.js';
import {
  AGENT_SKILLS_RULES,
  checkSkill,
  checkSkillKeys,
  checkSkillName,
  isRecord,
  type SkillKeyRules,
} from './rules.js';

export type SkillFillResult =
  | { ok: true; name: string; text: string; filled: string[] }
  | { ok: false; problems: string[] };

/**
 * Pure: the SKILL.md text for `text` read from a file called `fileName`, or every reason it cannot be made
 * valid. `rules` are the key rules of each folder it goes to; it must pass all of them.
 */
export function planSkillFile(
  fileName: string,
  text: string,
  rules: readonly SkillKeyRules[] = [AGENT_SKILLS_RULES],
): SkillFillResult {
  const parsed = tryParse(text);
  if ('problem' in parsed) return { ok: false, problems: [parsed.problem] };
  const data = parsed.hasFrontmatter ? parsed.data : {};
  if (!isRecord(data)) return { ok: false, problems: checkSkill(data, '') };

  const fields: Record<string, string> = {};
  if (data.name === undefined) fields.name = nameFromFileName(fileName);
  if (data.description === undefined) {
    const heading = firstHeading(parsed.body);
    if (heading === undefined)
      return {
        ok: false,
        problems: [
          'no description: the frontmatter has no `description` and the file has no `# ` heading to take one from',
        ],
      };
    fields.description = heading;
  }
  const filled = Object.keys(fields);
  const result = filled.length ? insertFields(text, fields, parsed.hasFrontmatter) : text;

  const final = tryParse(result);
  if ('problem' in final) return { ok: false, problems: [final.problem] };
  const name = isRecord(final.data) && typeof final.data.name === 'string' ? final.data.name : '';
  let problems = checkSkill(final.data, name, rules[0]);
  if (isRecord(final.data))
    problems = [
      ...new Set([
        ...problems,
        ...rules.slice(1).flatMap((r) => checkSkillKeys(final.data as Record<string, unknown>, r)),
      ]),
    ];
  problems = filled.includes('name')
    ? explainFileNameProblems(fileName, name, problems)
    : suggestName(final.data, problems);
  return problems.length ? { ok: false, problems } : { ok: true, name, text: result, filled };
}

// A name the user wrote that breaks the a-z rule (`Résumé`, `My_Notes`) gets the name we would have made of it.
function suggestName(data: unknown, problems: string[]): string[] {
  const name = isRecord(data) ? data.name : undefined;
  if (typeof name !== 'string' || checkSkillName(name).length === 0) return problems;
  const suggestion = toSkillName(name);
  if (checkSkillName(suggestion).length > 0 || suggestion === name) return problems;
  return [...problems, `write it as \`name: ${suggestion}\` (a skill name is plain a-z, 0-9 and single hyphens)`];
}

// The user wrote no name, so rule-by-rule complaints about one would puzzle them: say where it came from instead.
function explainFileNameProblems(fileName: string, name: string, problems: string[]): string[] {
  const nameProblems = checkSkillName(name);
  if (nameProblems.length === 0) return problems;
  const why =
    name === ''
      ? `the file name "${path.basename(fileName)}" has no letters a-z or digits to make a skill name of`
      : `the file name "${path.basename(fileName)}" makes no valid skill name (${nameProblems.join('; ')})`;
  return [
    `${why}: add \`name: your-skill-name\` to its frontmatter, or rename the file`,
    ...problems.filter((p) => !nameProblems.includes(p)),
  ];
}

export function nameFromFileName(fileName: string): string {
  const base = path.basename(fileName);
  const ext = path.extname(base);
  return toSkillName(ext ? base.slice(0, -ext.length) : base);
}

/** The text of the first `# ` heading outside fenced code blocks. */
export function firstHeading(markdown: string): string | undefined {
  let fence: string | undefined;
  for (const line of markdown.split(/\r?\n/)) {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (!fence || marker.startsWith(fence))) {
      fence = fence ? undefined : marker;
      continue;
    }
    if (fence) continue;
    const m = /^ {0,3}# +(.*?)(?:\s+#+)?\s*$/.exec(line);
    if (m && m[1].trim()) return m[1].trim();
  }
  return undefined;
}

function insertFields(text: string, fields: Record<string, string>, hasFrontmatter: boolean): string {
  const eol = /^[^\n]*\r\n/.test(text) ? '\r\n' : '\n';
  const yaml = renderYamlFields(fields).replace(/\n/g, eol);
  if (!hasFrontmatter) return `---${eol}${yaml}---${eol}${text}`;
  const firstLineEnd = text.indexOf('\n') + 1;
  return text.slice(0, firstLineEnd) + yaml + text.slice(firstLineEnd);
}

function tryParse(text: string): ReturnType<typeof parseFrontmatter> | { problem: string } {
  try {
    return parseFrontmatter(text);
  } catch (err) {
    const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
    return { problem: `the frontmatter is not valid YAML: ${reason}` };
  }
}
