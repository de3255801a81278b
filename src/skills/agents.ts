// Which folders skills go into per agent, and the SKILL.md files one source file becomes.
import { RalphkitError, EXIT } from '../errors.js';
import type { FileSource, IncomingFile } from '../install/types.js';
import { planSkillFile } from './fill.js';

/** `--agent` names → the skills folder that agent reads (the open Agent Skills layout for `agents`). */
export const AGENT_SKILL_DIRS = { claude: '.claude/skills', agents: '.agents/skills' } as const;

export type AgentName = keyof typeof AGENT_SKILL_DIRS;

/** `"claude,agents"` → ['claude', 'agents']; unknown names are a usage error. */
export function parseAgents(list: string): AgentName[] {
  const names = list.split(',').map((s) => s.trim()).filter(Boolean);
  const known = Object.keys(AGENT_SKILL_DIRS);
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length || names.length === 0) {
    throw new RalphkitError(`unknown --agent ${unknown.length ? unknown.join(', ') : '(empty)'}`, {
      exitCode: EXIT.error,
      hint: `use a comma-separated list of ${known.join(', ')}, e.g. --agent claude,agents`,
    });
  }
  return [...new Set(names)] as AgentName[];
}

export type SkillFilesOutcome = { ok: true; name: string; filled: string[]; files: IncomingFile[] } | { ok: false; problems: string[] };

/** Pure: the SKILL.md files (one per agent folder) that the markdown `text` of `fileName` installs as. */
export function skillFilesFor(fileName: string, text: string, agents: readonly AgentName[], source: FileSource): SkillFilesOutcome {
  const skill = planSkillFile(fileName, text);
  if (!skill.ok) return skill;
  const content = Buffer.from(skill.text, 'utf8');
  const files = agents.map((agent): IncomingFile => ({ path: `${AGENT_SKILL_DIRS[agent]}/${skill.name}/SKILL.md`, class: 'managed', source, content }));
  return { ok: true, name: skill.name, filled: skill.filled, files };
}
