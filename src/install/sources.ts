// The one table of what `install` writes, read from the package (templates/, dist/, skills/).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { RalphkitError, EXIT } from '../errors.js';
import type { FileClass, IncomingFile } from './types.js';
import { skillFilesFor, type AgentName } from '../skills/agents.js';

/** Names npm would drop or mangle in a published package, stored under another name in templates/. */
export const TEMPLATE_RENAMES: Readonly<Record<string, string>> = { _gitignore: '.gitignore' };

/** Template files the user owns once created: created when missing, never touched afterwards. */
export const STATE_FILES: ReadonlySet<string> = new Set(['ralph/prompt.md', 'ralph/prd.json', 'ralph/progress.txt']);

export const FILE_MODES: Readonly<Record<string, number>> = { 'ralph/ralph.sh': 0o755 };

/** Where each part of the package goes in the user's repository. */
export const INSTALL_TABLE = [
  { from: 'templates/ralph', to: 'ralph', kind: 'templates' },
  { from: 'dist/ralph.mjs', to: 'ralph/ralph.mjs', kind: 'engine' },
  { from: 'skills', to: 'skills', kind: 'skills' },
] as const;

export interface SourceOptions {
  /** The package root holding templates/, skills/ and dist/. */
  root: string;
  agents: readonly AgentName[];
  skills: boolean;
}

export function readInstallSources(options: SourceOptions): IncomingFile[] {
  const files: IncomingFile[] = [];
  for (const row of INSTALL_TABLE) {
    const from = path.join(options.root, row.from);
    if (row.kind === 'templates') files.push(...readTemplates(from, row.to));
    if (row.kind === 'engine') files.push(readEngine(from, row.to));
    if (row.kind === 'skills' && options.skills) files.push(...readShippedSkills(from, options.agents));
  }
  return files;
}

function readTemplates(dir: string, to: string): IncomingFile[] {
  return listFiles(dir).map((rel) => {
    const target = `${to}/${renameTemplate(rel)}`;
    const cls: FileClass = STATE_FILES.has(target) ? 'state' : 'managed';
    return { path: target, class: cls, source: 'ralphkit', content: readFileSync(path.join(dir, rel)), mode: FILE_MODES[target] };
  });
}

export function renameTemplate(rel: string): string {
  return rel.split('/').map((part) => TEMPLATE_RENAMES[part] ?? part).join('/');
}

function readEngine(file: string, to: string): IncomingFile {
  if (!existsSync(file)) {
    throw new RalphkitError(`the loop engine ${file} is missing (it is built from src/engine/)`, {
      exitCode: EXIT.error,
      hint: 'run `npm run build` in the ralphkit folder, then install again',
    });
  }
  return { path: to, class: 'managed', source: 'ralphkit', content: readFileSync(file), mode: FILE_MODES[to] };
}

function readShippedSkills(dir: string, agents: readonly AgentName[]): IncomingFile[] {
  const sources = listFiles(dir).filter((f) => f.endsWith('.md') && !f.includes('/'));
  return sources.flatMap((rel) => {
    const file = path.join(dir, rel);
    const outcome = skillFilesFor(rel, readFileSync(file, 'utf8'), agents, 'ralphkit');
    if (!outcome.ok) throw new RalphkitError(`ralphkit's own skill ${file} breaks the Agent Skills rules: ${outcome.problems.join('; ')}`);
    return outcome.files;
  });
}

/** Every file under `dir`, relative with forward slashes, sorted; [] when the folder is missing. */
export function listFiles(dir: string, prefix = ''): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).sort().flatMap((name) => {
    const rel = prefix ? `${prefix}/${name}` : name;
    return statSync(path.join(dir, name)).isDirectory() ? listFiles(path.join(dir, name), rel) : [rel];
  });
}
