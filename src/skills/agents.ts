// The SKILL.md files one source file becomes, one per agent's skills folder (agent-names.ts names the folders).
import type { FileSource, IncomingFile } from '../install/types.js';
import { skillFilePath, type SkillAgent } from './agent-names.js';
import { planSkillFile } from './fill.js';
import { AGENT_SKILLS_RULES, CLAUDE_CODE_RULES, type SkillKeyRules } from './rules.js';

export { AGENT_SKILL_DIRS, parseAgents, skillFilePath, type SkillAgent } from './agent-names.js';

export type SkillFilesOutcome =
  | { ok: true; name: string; filled: string[]; files: IncomingFile[] }
  | { ok: false; problems: string[] };

/** The frontmatter keys each agent's skills folder accepts: Claude Code reads more than the open format defines. */
const KEY_RULES: Readonly<Record<SkillAgent, SkillKeyRules>> = {
  claude: CLAUDE_CODE_RULES,
  agents: AGENT_SKILLS_RULES,
};

/**
 * Pure: the SKILL.md files (one per agent folder) that the markdown `text` of `fileName` installs as.
 * With no agents (the build's check of ralphkit's own skills) the strict Agent Skills keys apply.
 */
export function skillFilesFor(
  fileName: string,
  text: string,
  agents: readonly SkillAgent[],
  source: FileSource,
): SkillFilesOutcome {
  const rules = agents.length ? agents.map((agent) => KEY_RULES[agent]) : [AGENT_SKILLS_RULES];
  const skill = planSkillFile(fileName, text, rules);
  if (!skill.ok) return skill;
  const content = Buffer.from(skill.text, 'utf8');
  const files = agents.map(
    (agent): IncomingFile => ({ path: skillFilePath(agent, skill.name), class: 'managed', source, content }),
  );
  return { ok: true, name: skill.name, filled: skill.filled, files };
}
