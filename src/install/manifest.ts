// Reads ralph/.ralphkit.json: the ralphkit version and the hash of every managed file as installed.
import { existsSync, readFileSync } from 'node:fs';
import { CI_PROVIDERS, type CiProvider, type ClaudeHookRecord, type Manifest } from './types.js';
import { parseManifestCore } from '../util/manifest-files.js';
import { isRecord } from '../skills/rules.js';
import { AGENT_SKILL_DIRS, type SkillAgent } from '../skills/agent-names.js';

export type ManifestRead = { manifest?: Manifest; warning?: string };

/** A missing manifest is a first install; an unreadable one is treated as missing, with a warning. */
export function readManifest(file: string): ManifestRead {
  if (!existsSync(file)) return {};
  const parsed = parseManifest(readFileSync(file, 'utf8'));
  if (parsed) return { manifest: parsed };
  return {
    warning: `ignoring ${file}: it is not a ralphkit manifest, so every file that differs from ralphkit's counts as edited`,
  };
}

/** Pure: the manifest in `text`, or undefined when it is not one (its version and files: util/manifest-files.ts). */
export function parseManifest(text: string): Manifest | undefined {
  const core = parseManifestCore(text);
  if (!core) return undefined;
  const { data } = core;
  const claudeHook = parseHookRecord(data.claudeHook);
  const ci = CI_PROVIDERS.includes(data.ci as CiProvider) ? (data.ci as CiProvider) : undefined;
  const agents = parseAgentList(data.agents);
  return {
    ralphkit: core.ralphkit,
    files: core.files,
    ...(claudeHook ? { claudeHook } : {}),
    ...(ci ? { ci } : {}),
    ...(agents ? { agents } : {}),
  };
}

function parseAgentList(value: unknown): SkillAgent[] | undefined {
  if (
    !Array.isArray(value) ||
    !value.length ||
    !value.every((v) => typeof v === 'string' && Object.hasOwn(AGENT_SKILL_DIRS, v))
  )
    return undefined;
  return value as SkillAgent[];
}

const HOOK_ADDED: ReadonlySet<unknown> = new Set(['file', 'hooks', 'Stop', 'entry']);

function parseHookRecord(value: unknown): ClaudeHookRecord | undefined {
  if (!isRecord(value) || !HOOK_ADDED.has(value.added)) return undefined;
  const added = value.added as ClaudeHookRecord['added'];
  return typeof value.gap === 'string' && /^\s*$/.test(value.gap) ? { added, gap: value.gap } : { added };
}
