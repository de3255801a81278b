// `ralphkit skill add` as a function. A user's skill, once added, is managed like ralphkit's own:
// its hash goes into ralph/.ralphkit.json (source "user"), so adding it again after editing the
// source file upgrades a pristine copy and reports a conflict if the installed copy was edited.
import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { RalphkitError, EXIT } from '../errors.js';
import { readVersion } from '../version.js';
import { resolveCwdFolder } from '../cwd.js';
import { withInstallLock } from './lock.js';
import { runFiles, type AskConflict, type FileRunResult } from './run-files.js';
import { MANIFEST_PATH, type IncomingFile } from './types.js';
import { readManifest } from './manifest.js';
import { skillFilesFor, type SkillAgent } from '../skills/agents.js';
import { ralphkitCommand } from '../util/invocation.js';

export interface SkillAddOptions {
  /** The repository to install into. */
  cwd: string;
  /** Markdown files to install as skills (relative paths resolve against the process's folder). */
  files: string[];
  /** Skill folders to install into; default: the ones the manifest records (the last install's), else ['claude']. */
  agents?: SkillAgent[];
  force?: boolean;
  dryRun?: boolean;
  diff?: boolean;
  ask?: AskConflict;
  now?: Date;
}

export interface SkillAddResult extends FileRunResult {
  skills: { file: string; name: string; filled: string[] }[];
}

export async function runSkillAdd(options: SkillAddOptions): Promise<SkillAddResult> {
  if (options.files.length === 0)
    throw new RalphkitError('no skill files given', {
      exitCode: EXIT.error,
      hint: ralphkitCommand('skill add notes/review.md'),
    });
  const folder = resolveCwdFolder(options.cwd);
  const agents = options.agents ?? readManifest(path.join(folder, MANIFEST_PATH)).manifest?.agents ?? ['claude'];
  const skills: SkillAddResult['skills'] = [];
  const files: IncomingFile[] = [];
  const refusals: string[] = [];
  for (const file of options.files) {
    const outcome = skillFilesFor(file, readSkillSource(file), agents, 'user');
    if (!outcome.ok) {
      refusals.push(...outcome.problems.map((p) => `${file}: ${p}`));
      continue;
    }
    skills.push({ file, name: outcome.name, filled: outcome.filled });
    files.push(...outcome.files);
  }
  if (refusals.length) {
    throw new RalphkitError(`cannot make a valid skill (nothing was written):\n  ${refusals.join('\n  ')}`, {
      exitCode: EXIT.refused,
      hint: 'fix the frontmatter, e.g. `name: my-skill` (a-z, 0-9, single hyphens) and `description: what it does` (no < or >)',
    });
  }
  // Its writes share the manifest and the staging folder with install: one of them at a time.
  const write = () => runFiles({ ...options, files, version: readVersion(), keepRecordedVersion: true });
  const result = options.dryRun ? await write() : await withInstallLock(realpathSync(folder), write);
  return { ...result, skills };
}

const READ_ERRORS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file',
  EISDIR: 'a folder, not a file',
  EACCES: 'permission denied',
  ENOTDIR: 'no such file',
};

function readSkillSource(file: string): string {
  try {
    return readFileSync(path.resolve(file), 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    const reason = READ_ERRORS[code];
    throw new RalphkitError(
      reason === 'no such file' ? `no such file: ${file}` : `cannot read ${file}: ${reason ?? (err as Error).message}`,
      {
        exitCode: EXIT.refused,
        hint: `check the path; skill add takes markdown files, e.g. ${ralphkitCommand('skill add docs/review.md')}`,
      },
    );
  }
}
