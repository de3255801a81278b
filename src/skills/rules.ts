// The Agent Skills rules (SPEC §3) as a pure check over parsed frontmatter.

export const SKILL_KEYS = ['name', 'description', 'license', 'allowed-tools', 'metadata', 'compatibility'] as const;
export const NAME_MAX = 64;
export const DESCRIPTION_MAX = 1024;

/** Every reason the name breaks the rules; empty when it is valid. */
export function checkSkillName(name: unknown): string[] {
  if (typeof name !== 'string') return [`name must be a string, not ${describe(name)}`];
  const problems: string[] = [];
  if (name.length < 1 || name.length > NAME_MAX) problems.push(`name must be 1–${NAME_MAX} characters (it has ${name.length})`);
  if (/[^a-z0-9-]/.test(name)) problems.push(`name "${name}" may hold only lowercase letters a-z, digits and hyphens`);
  if (name.startsWith('-') || name.endsWith('-')) problems.push(`name "${name}" must not start or end with a hyphen`);
  if (name.includes('--')) problems.push(`name "${name}" must not contain two hyphens in a row`);
  return problems;
}

export function checkSkillDescription(description: unknown): string[] {
  if (typeof description !== 'string') return [`description must be a string, not ${describe(description)}`];
  const problems: string[] = [];
  if (description.trim().length < 1) problems.push('description must not be empty');
  if (description.length > DESCRIPTION_MAX) problems.push(`description must be at most ${DESCRIPTION_MAX} characters (it has ${description.length})`);
  if (/[<>]/.test(description)) problems.push('description must not contain "<" or ">"');
  return problems;
}

/** Every rule the frontmatter `data` breaks for a skill stored in the folder `folder`. */
export function checkSkill(data: unknown, folder: string): string[] {
  if (!isRecord(data)) return [`frontmatter must be a YAML mapping of fields, not ${describe(data)}`];
  const problems = [...checkSkillName(data.name), ...checkSkillDescription(data.description)];
  if (typeof data.name === 'string' && data.name !== folder) problems.push(`name "${data.name}" must equal its folder name "${folder}"`);
  const extra = Object.keys(data).filter((k) => !(SKILL_KEYS as readonly string[]).includes(k));
  if (extra.length) problems.push(`frontmatter keys not allowed by Agent Skills: ${extra.join(', ')} (allowed: ${SKILL_KEYS.join(', ')})`);
  return problems;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

function describe(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'empty';
  if (Array.isArray(value)) return 'a list';
  if (value instanceof Date) return 'a date';
  return `a ${typeof value}`;
}
