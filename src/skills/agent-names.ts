// The `--agent` names and the skills folder each one reads, apart from agents.ts so that parsing the
// flag (every install, at start-up) does not load the frontmatter parser that filling a skill needs.
import { RalphkitError, EXIT } from '../errors.js';

/** `--agent` names → the skills folder that agent reads (the open Agent Skills layout for `agents`). */
export const AGENT_SKILL_DIRS = { claude: '.claude/skills', agents: '.agents/skills' } as const;

/**
 * An install `--agent` name: which skills folder to write (`claude`, `agents`). Not the loop's agent
 * (engine/types.ts `AgentName`: the coding agent CLI the runner starts).
 */
export type SkillAgent = keyof typeof AGENT_SKILL_DIRS;

/** `"claude,agents"` → ['claude', 'agents']; unknown names are a usage error. */
export function parseAgents(list: string): SkillAgent[] {
  const names = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const known = Object.keys(AGENT_SKILL_DIRS);
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length || names.length === 0) {
    throw new RalphkitError(`unknown --agent ${unknown.length ? unknown.join(', ') : '(empty)'}`, {
      exitCode: EXIT.error,
      hint: `use a comma-separated list of ${known.join(', ')}, e.g. --agent claude,agents`,
    });
  }
  return [...new Set(names)] as SkillAgent[];
}

/** Where the skill `name` is installed for `agent`. */
export function skillFilePath(agent: SkillAgent, name: string): string {
  return `${AGENT_SKILL_DIRS[agent]}/${name}/SKILL.md`;
}
