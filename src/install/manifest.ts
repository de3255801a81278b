// Reads ralph/.ralphkit.json: the ralphkit version and the hash of every managed file as installed.
import { existsSync, readFileSync } from 'node:fs';
import { CI_PROVIDERS, type CiProvider, type ClaudeHookRecord, type Manifest, type ManifestEntry } from './types.js';
import { isRecord } from '../skills/rules.js';
import { AGENT_SKILL_DIRS, type SkillAgent } from '../skills/agent-names.js';

export type ManifestRead = { manifest?: Manifest; warning?: string };

/** A missing manifest is a first install; an unreadable one is treated as missing, with a warning. */
export function readManifest(file: string): ManifestRead {
  if (!existsSync(file)) return {};
  const parsed = parseManifest(readFileSync(file, 'utf8'));
  if (parsed) return { manifest: parsed };
  return { warning: `ignoring ${file}: it is not a ralphkit manifest, so every file that differs from ralphkit's counts as edited` };
}

/** Pure: the manifest in `text`, or undefined when it is not one. */
export function parseManifest(text: string): Manifest | undefined {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(data) || typeof data.ralphkit !== 'string' || !isRecord(data.files)) return undefined;
  const files: Record<string, ManifestEntry> = {};
  for (const [path, entry] of Object.entries(data.files)) {
    if (!isRecord(entry) || typeof entry.sha256 !== 'string') continue;
    files[path] = { sha256: entry.sha256, source: entry.source === 'user' ? 'user' : 'ralphkit' };
  }
  const claudeHook = parseHookRecord(data.claudeHook);
  const ci = CI_PROVIDERS.includes(data.ci as CiProvider) ? (data.ci as CiProvider) : undefined;
  const agents = parseAgentList(data.agents);
  return { ralphkit: data.ralphkit, files, ...(claudeHook ? { claudeHook } : {}), ...(ci ? { ci } : {}), ...(agents ? { agents } : {}) };
}

function parseAgentList(value: unknown): SkillAgent[] | undefined {
  if (!Array.isArray(value) || !value.length || !value.every((v) => typeof v === 'string' && Object.hasOwn(AGENT_SKILL_DIRS, v))) return undefined;
  return value as SkillAgent[];
}

const HOOK_ADDED: ReadonlySet<unknown> = new Set(['file', 'hooks', 'Stop', 'entry']);

function parseHookRecord(value: unknown): ClaudeHookRecord | undefined {
  if (!isRecord(value) || !HOOK_ADDED.has(value.added)) return undefined;
  const added = value.added as ClaudeHookRecord['added'];
  return typeof value.gap === 'string' && /^\s*$/.test(value.gap) ? { added, gap: value.gap } : { added };
}
