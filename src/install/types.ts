// Shapes shared by the installer's planner, applier and printers.
import type { SkillAgent } from '../skills/agent-names.js';

/** `merged`: a file of the user's that ralphkit edits in place (.claude/settings.json, its Stop hook entry). */
export type FileClass = 'managed' | 'state' | 'merged';

/** Who put a managed file there: ralphkit's own templates, or `ralphkit skill add` from the user's file. */
export type FileSource = 'ralphkit' | 'user';

export type Action =
  | 'create'
  | 'identical'
  | 'upgrade'
  | 'fix-mode'
  | 'keep'
  | 'conflict'
  | 'overwrite'
  | 'skip-state'
  | 'merge'
  | 'remove';

/** One file ralphkit wants in the repository. */
export interface IncomingFile {
  /** Repository-relative, forward slashes. */
  path: string;
  class: FileClass;
  source: FileSource;
  content: Buffer;
  mode?: number;
  /**
   * For a merged file: why it changes, as the plan prints it; `remove` deletes it (ralphkit created it, nothing else is
   * left). For a managed file, `remove` takes it out (`install --no-ci`) by the same rules as an upgrade: an edited one
   * is a conflict unless --force backs it up first.
   */
  reason?: string;
  remove?: boolean;
}

export interface ManifestEntry {
  sha256: string;
  source: FileSource;
}

/**
 * ralphkit's Stop hook in .claude/settings.json (`install --claude-hook`): what install added, so that taking the hook
 * out removes exactly that. `gap`: the text that was between the brackets of the empty object or array it went into.
 */
export interface ClaudeHookRecord {
  added: 'file' | 'hooks' | 'Stop' | 'entry';
  gap?: string;
}

/** The CI systems `install --ci` knows. */
export const CI_PROVIDERS = ['github'] as const;
export type CiProvider = (typeof CI_PROVIDERS)[number];

export interface Manifest {
  /** The ralphkit version that last wrote the manifest. */
  ralphkit: string;
  files: Record<string, ManifestEntry>;
  /** Present while the Claude Code Stop hook is installed; a plain `install` then keeps it current. */
  claudeHook?: ClaudeHookRecord;
  /** Present while a CI workflow is installed (`install --ci github`); a plain `install` then keeps it current. */
  ci?: CiProvider;
  /** The skill folders (`--agent`) the last install with skills wrote; a plain `install` keeps those current. */
  agents?: SkillAgent[];
}

export interface PlanItem {
  path: string;
  class: FileClass;
  action: Action;
  /** Why, in words the summary can print. */
  reason: string;
  /** Where the user's file is copied before an overwrite. */
  backup?: string;
  /** For `keep`: ralphkit has nothing newer than the user's edit, or the user chose theirs over a newer version. */
  keptBecause?: 'nothing-newer' | 'chosen';
  /** A managed file being taken out (`install --no-ci`): its conflict is resolved by removing, not by installing. */
  removing?: true;
}

export interface InstallPlan {
  items: PlanItem[];
  manifest: { path: string; action: 'create' | 'update' | 'identical'; next: Manifest };
}

/** How the user settled a conflict at the prompt. */
export type Resolution = 'overwrite' | 'keep';

export const MANIFEST_PATH = 'ralph/.ralphkit.json';
export const BACKUP_DIR = 'ralph/.backup';
/** Where an install stages its files before putting them in place (src/install/staging.ts), at the top of --cwd. */
export const STAGING_DIR = '.ralphkit-staging';
