// The Agent Skills rules (SPEC §3) as a pure check over parsed frontmatter.

/** The keys the open Agent Skills format allows: all that `.agents/skills/` may hold. */
export const SKILL_KEYS = ['name', 'description', 'license', 'allowed-tools', 'metadata', 'compatibility'] as const;

/**
 * The further keys Claude Code reads from a skill's frontmatter, kept as written in `.claude/skills/`.
 * Source: the skill frontmatter schema and loader in Claude Code 2.1.332 (its CLI bundle, read 2026-12-02),
 * which match the "Frontmatter reference" of https://code.claude.com/docs/en/skills; `version` and
 * `arguments` are read by that loader though the page leaves them out, and `disallowedTools` is its alias
 * of `disallowed-tools`. Keys the schema marks internal (plugin bookkeeping) are left out.
 */
export const CLAUDE_CODE_SKILL_KEYS = [
  'argument-hint',
  'arguments',
  'disable-model-invocation',
  'user-invocable',
  'model',
  'effort',
  'shell',
  'version',
  'when_to_use',
  'paths',
  'hooks',
  'context',
  'agent',
  'background',
  'disallowed-tools',
  'disallowedTools',
] as const;

/** Which frontmatter keys a skills folder accepts, and whose rules those are. */
export interface SkillKeyRules {
  standard: 'Agent Skills' | 'Claude Code';
  keys: readonly string[];
}

export const AGENT_SKILLS_RULES: SkillKeyRules = { standard: 'Agent Skills', keys: SKILL_KEYS };
export const CLAUDE_CODE_RULES: SkillKeyRules = {
  standard: 'Claude Code',
  keys: [...SKILL_KEYS, ...CLAUDE_CODE_SKILL_KEYS],
};
export const NAME_MAX = 64;
export const DESCRIPTION_MAX = 1024;

/** Every reason the name breaks the rules; empty when it is valid. */
export function checkSkillName(name: unknown): string[] {
  if (typeof name !== 'string') return [`name must be a string, not ${describe(name)}`];
  const problems: string[] = [];
  if (name.length < 1 || name.length > NAME_MAX)
    problems.push(`name must be 1–${NAME_MAX} characters (it has ${name.length})`);
  if (/[^a-z0-9-]/.test(name)) problems.push(`name "${name}" may hold only lowercase letters a-z, digits and hyphens`);
  if (name.startsWith('-') || name.endsWith('-')) problems.push(`name "${name}" must not start or end with a hyphen`);
  if (name.includes('--')) problems.push(`name "${name}" must not contain two hyphens in a row`);
  return problems;
}

export function checkSkillDescription(description: unknown): string[] {
  if (typeof description !== 'string') return [`description must be a string, not ${describe(description)}`];
  const problems: string[] = [];
  if (description.trim().length < 1) problems.push('description must not be empty');
  if (description.length > DESCRIPTION_MAX)
    problems.push(`description must be at most ${DESCRIPTION_MAX} characters (it has ${description.length})`);
  if (/[<>]/.test(description)) problems.push('description must not contain "<" or ">"');
  return problems;
}

/** Every rule the frontmatter `data` breaks for a skill stored in the folder `folder` (keys: Agent Skills' unless `rules` says). */
export function checkSkill(data: unknown, folder: string, rules: SkillKeyRules = AGENT_SKILLS_RULES): string[] {
  if (!isRecord(data)) return [`frontmatter must be a YAML mapping of fields, not ${describe(data)}`];
  const problems = [...checkSkillName(data.name), ...checkSkillDescription(data.description)];
  if (typeof data.name === 'string' && data.name !== folder)
    problems.push(`name "${data.name}" must equal its folder name "${folder}"`);
  return [...problems, ...checkSkillKeys(data, rules)];
}

/** The keys of `data` that `rules` does not allow, as one problem naming them (none when all are allowed). */
export function checkSkillKeys(data: Record<string, unknown>, rules: SkillKeyRules): string[] {
  const extra = Object.keys(data).filter((k) => !rules.keys.includes(k));
  if (extra.length === 0) return [];
  if (rules.standard === 'Claude Code') {
    return [
      `frontmatter keys neither Agent Skills nor Claude Code define: ${extra.join(', ')} (put your own fields under \`metadata:\`)`,
    ];
  }
  const claudeOnly = extra.filter((k) => CLAUDE_CODE_RULES.keys.includes(k));
  const why = claudeOnly.length
    ? `; ${claudeOnly.join(', ')} ${claudeOnly.length > 1 ? 'are Claude Code keys' : 'is a Claude Code key'}, kept only in .claude/skills/ (--agent claude)`
    : '';
  return [
    `frontmatter keys not allowed by Agent Skills: ${extra.join(', ')} (allowed: ${SKILL_KEYS.join(', ')})${why}`,
  ];
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
