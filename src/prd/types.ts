// The prd.json format (SPEC §5): a superset of the original Ralph loop's plan.
export interface Story {
  id: string;
  title: string;
  description?: string;
  acceptanceCriteria: string[];
  priority: number;
  /** "cancelled" and "skipped" are spellings of `skip: true` found in real plans, read with a warning (skip.ts). */
  passes: boolean | 'cancelled' | 'skipped';
  /** Set aside by the plan's author: never picked, never verified, not counted against completion. */
  skip?: boolean;
  notes?: string;
  dependsOn?: string[];
  checks?: string[];
  /** Pinned files (globs) this story is meant to change; its checks then use the claimed commit's versions. */
  mayChange?: string[];
  /** Whether a reviewer must SHIP the story's claims (default: yes, when a reviewer is configured; SPEC §11). */
  review?: boolean;
  [extra: string]: unknown;
}

export interface Prd {
  project?: string;
  branchName: string;
  baseBranch?: string;
  description?: string;
  checks?: string[];
  /** Optional command run in each fresh verification checkout before its checks (`npm ci`). */
  setup?: string;
  /** Globs of files pinned at the plan commit, added to the default set (test folders, test-runner configs). */
  protect?: string[];
  /** false: only `protect` and the files the checks name are pinned, not the default test paths. */
  protectDefaults?: boolean;
  userStories: Story[];
  [extra: string]: unknown;
}

/** The kind of a problem, for tools and tests; the message is what people read. */
export type PrdProblemCode =
  | 'syntax'
  | 'duplicate-key'
  | 'missing'
  | 'type'
  | 'empty'
  | 'duplicate-id'
  | 'unknown-dependency'
  | 'cycle'
  | 'branch-name'
  | 'unreadable'
  // Warnings: the plan is valid and runs, but probably not as its author meant.
  | 'did-you-mean'
  | 'skip-spelling'
  | 'unsafe-text'
  | 'shell-word'
  | 'story-id-ref'
  | 'example-plan';

/** One problem found in a plan; line and col are 1-based and present when known. */
export interface PrdProblem {
  file: string;
  line?: number;
  col?: number;
  message: string;
  code?: PrdProblemCode;
  /** Where in the document, e.g. `userStories[2].passes`; empty for the document itself. */
  path?: string;
}

export interface PrdValidation {
  /** The parsed plan, present only when there are no problems. */
  prd?: Prd;
  problems: PrdProblem[];
  /** What does not stop the plan from running but is probably not what its author meant, sorted by position. */
  warnings: PrdProblem[];
}
