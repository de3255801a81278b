// Shapes shared by the installer's planner, applier and printers.

export type FileClass = 'managed' | 'state';

/** Who put a managed file there: ralphkit's own templates, or `ralphkit skill add` from the user's file. */
export type FileSource = 'ralphkit' | 'user';

export type Action = 'create' | 'identical' | 'upgrade' | 'fix-mode' | 'keep' | 'conflict' | 'overwrite' | 'skip-state';

/** One file ralphkit wants in the repository. */
export interface IncomingFile {
  /** Repository-relative, forward slashes. */
  path: string;
  class: FileClass;
  source: FileSource;
  content: Buffer;
  mode?: number;
}

export interface ManifestEntry {
  sha256: string;
  source: FileSource;
}

export interface Manifest {
  /** The ralphkit version that last wrote the manifest. */
  ralphkit: string;
  files: Record<string, ManifestEntry>;
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
