// The SKILL.md files one source file becomes, one per agent's skills folder (agent-names.ts names the folders).
import type { FileSource, IncomingFile } from '../install/types.js';
import { skillFilePath, type AgentName } from './agent-names.js';
import { planSkillFile } from './fill.js';

export { AGENT_SKILL_DIRS, parseAgents, skillFilePath, type AgentName } from './agent-names.js';

export type SkillFilesOutcome = { ok: true; name: string; filled: string[]; files: IncomingFile[] } | { ok: false; problems: string[] };

/** Pure: the SKILL.md files (one per agent folder) that the markdown `text` of `fileName` installs as. */
export function skillFilesFor(fileName: string, text: string, agents: readonly AgentName[], source: FileSource): SkillFilesOutcome {
  const skill = planSkillFile(fileName, text);
  if (!skill.ok) return skill;
  const content = Buffer.from(skill.text, 'utf8');
  const files = agents.map((agent): IncomingFile => ({ path: skillFilePath(agent, skill.name), class: 'managed', source, content }));
  return { ok: true, name: skill.name, filled: skill.filled, files };
}
