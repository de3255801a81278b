// The one table of what `install` writes, read from the package (templates/, dist/, skills/).
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { RalphkitError, EXIT } from '../errors.js';
import type { FileClass, IncomingFile } from './types.js';
import { skillFilePath, type SkillAgent } from '../skills/agent-names.js';

/** Names npm would drop or mangle in a published package, stored under another name in templates/. */
export const TEMPLATE_RENAMES: Readonly<Record<string, string>> = { _gitignore: '.gitignore' };

/** Template files the user owns once created: created when missing, never touched afterwards. */
export const STATE_FILES: ReadonlySet<string> = new Set([
  'ralph/prompt.md',
  'ralph/prd.json',
  'ralph/progress.txt',
  'ralph/review.md',
]);

export const FILE_MODES: Readonly<Record<string, number>> = { 'ralph/ralph.sh': 0o755 };

/** Where each part of the package goes in the user's repository. */
export const INSTALL_TABLE = [
  { from: 'templates/ralph', to: 'ralph', kind: 'templates' },
  { from: 'dist/ralph.mjs', to: 'ralph/ralph.mjs', kind: 'engine' },
  { from: 'skills', to: 'skills', kind: 'skills' },
] as const;

/**
 * ralphkit's own skills that passed the skill check when the CLI was built, needing nothing filled in:
 * file name in skills/ → sha256 of its bytes and its skill name. A skill whose bytes have that hash
 * installs as it is, so install does not load the YAML parser for files the build already checked;
 * any other file (another package root, a test's fake package, a skill edited since) gets the full check.
 */
export type CheckedSkills = Readonly<Record<string, { sha256: string; name: string }>>;

// Set by scripts/build.mjs from checkShippedSkills (esbuild `define`); absent where src/ runs unbuilt (vitest).
declare const __RALPHKIT_CHECKED_SKILLS__: CheckedSkills | undefined;
const CHECKED_AT_BUILD: CheckedSkills =
  typeof __RALPHKIT_CHECKED_SKILLS__ === 'undefined' ? {} : __RALPHKIT_CHECKED_SKILLS__;

export interface SourceOptions {
  /** The package root holding templates/, skills/ and dist/. */
  root: string;
  agents: readonly SkillAgent[];
  skills: boolean;
  /** Default: the table recorded when this CLI was built. */
  checkedSkills?: CheckedSkills;
}

export async function readInstallSources(options: SourceOptions): Promise<IncomingFile[]> {
  const files: IncomingFile[] = [];
  for (const row of INSTALL_TABLE) {
    const from = path.join(options.root, row.from);
    if (row.kind === 'templates') files.push(...readTemplates(from, row.to));
    if (row.kind === 'engine') files.push(readEngine(from, row.to));
    if (row.kind === 'skills' && options.skills)
      files.push(...(await readShippedSkills(from, options.agents, options.checkedSkills ?? CHECKED_AT_BUILD)));
  }
  return files;
}

function readTemplates(dir: string, to: string): IncomingFile[] {
  return listFiles(dir).map((rel) => {
    const target = `${to}/${renameTemplate(rel)}`;
    const cls: FileClass = STATE_FILES.has(target) ? 'state' : 'managed';
    return {
      path: target,
      class: cls,
      source: 'ralphkit',
      content: readFileSync(path.join(dir, rel)),
      mode: FILE_MODES[target],
    };
  });
}

export function renameTemplate(rel: string): string {
  return rel
    .split('/')
    .map((part) => TEMPLATE_RENAMES[part] ?? part)
    .join('/');
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

async function readShippedSkills(
  dir: string,
  agents: readonly SkillAgent[],
  checked: CheckedSkills,
): Promise<IncomingFile[]> {
  const files: IncomingFile[] = [];
  for (const rel of shippedSkillNames(dir)) {
    const file = path.join(dir, rel);
    const bytes = readFileSync(file);
    const text = bytes.toString('utf8');
    const known = Object.hasOwn(checked, rel) ? checked[rel] : undefined;
    if (known && known.sha256 === sha256(bytes)) {
      // What skillFilesFor returns for a skill that needs nothing filled in: its text, once per agent folder.
      const content = Buffer.from(text, 'utf8');
      files.push(
        ...agents.map(
          (agent): IncomingFile => ({
            path: skillFilePath(agent, known.name),
            class: 'managed',
            source: 'ralphkit',
            content,
          }),
        ),
      );
      continue;
    }
    const { skillFilesFor } = await import('../skills/agents.js');
    const outcome = skillFilesFor(rel, text, agents, 'ralphkit');
    if (!outcome.ok)
      throw new RalphkitError(
        `ralphkit's own skill ${file} breaks the Agent Skills rules: ${outcome.problems.join('; ')}`,
      );
    files.push(...outcome.files);
  }
  return files;
}

/** The build's half of CheckedSkills: each skill in `dir` that passes the check with nothing to fill in. */
export async function checkShippedSkills(dir: string): Promise<CheckedSkills> {
  const { skillFilesFor } = await import('../skills/agents.js');
  const checked: Record<string, { sha256: string; name: string }> = {};
  for (const rel of shippedSkillNames(dir)) {
    const bytes = readFileSync(path.join(dir, rel));
    const outcome = skillFilesFor(rel, bytes.toString('utf8'), [], 'ralphkit');
    if (outcome.ok && outcome.filled.length === 0) checked[rel] = { sha256: sha256(bytes), name: outcome.name };
  }
  return checked;
}

function shippedSkillNames(dir: string): string[] {
  return listFiles(dir).filter((f) => f.endsWith('.md') && !f.includes('/'));
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Every file under `dir`, relative with forward slashes, sorted; [] when the folder is missing. */
export function listFiles(dir: string, prefix = ''): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const rel = prefix ? `${prefix}/${name}` : name;
      return statSync(path.join(dir, name)).isDirectory() ? listFiles(path.join(dir, name), rel) : [rel];
    });
}
