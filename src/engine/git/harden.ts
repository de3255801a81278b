// Every git process the runner starts goes through these settings (SPEC §6): the agent can write the repository's
// hooks and configuration, so nothing git would run on the runner's behalf may come from there. `-c` settings
// override the repository's own values for the duration of one command, whatever .git/config says.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Hooks off (a post-commit hook would otherwise re-flip `passes` right after the runner's reject commit, and a
 * post-checkout hook would write files into the verification checkout), no fsmonitor daemon (a command git would
 * execute), no signing prompts, no external diff or textconv programs, no transport that runs commands.
 */
export const HARDENED_CONFIG: readonly string[] = [
  // On Windows there is no /dev/null folder to point at: an empty folder of this process's own, made once.
  `core.hooksPath=${process.platform === 'win32' ? mkdtempSync(path.join(tmpdir(), 'ralphkit-no-hooks-')) : '/dev/null'}`,
  'core.fsmonitor=false',
  'core.untrackedCache=false',
  'commit.gpgsign=false',
  'tag.gpgsign=false',
  'diff.external=',
  'protocol.ext.allow=never',
  // .git/objects/info/commit-graph gives each commit's parents without reading the commit: one the agent writes
  // would have `log` and `rev-list` walk a history it made up. The commits themselves are read instead.
  'core.commitGraph=false',
  // A gitlink whose folder holds a repository (the agent can make one) is a repository of the agent's: git must not
  // enter it (a status there runs its filters, outside the sandbox; the runner's status says --ignore-submodules=dirty).
  // Nothing of the runner's recurses into submodules.
  'submodule.recurse=false',
  'status.submoduleSummary=false',
  // GIT_GRAFT_FILE (below) names an empty graft file; without this, git 2.18+ says on stderr that grafts are
  // deprecated on every call, and that text reached the runner's warnings (a push refusal quoted it).
  'advice.graftFileDeprecated=false',
  // Recorded conflict resolutions (.git/rr-cache, the agent's to write) never shape a merge of the runner's (the
  // --parallel merge queue), and the runner's merges record none (verify/rerere-hold.ts holds the folder).
  'rerere.enabled=false',
  // A file's change time is part of what git compares before it trusts the index's word that the file is unchanged:
  // the runner moves it for every file the agent may have recorded stat data for (verify/index-flags.ts distrustStat).
  'core.trustctime=true',
  'core.checkStat=default',
  // One index file, whatever the configuration says: a split one keeps entries where `.git/index` does not show a
  // change (verify/index-flags.ts unsplitIndex).
  'core.splitIndex=false',
];

/** The `-c key=value` arguments that go before every git subcommand the runner runs. */
export const HARDENED_ARGS: readonly string[] = HARDENED_CONFIG.flatMap((kv) => ['-c', kv]);

/**
 * Git must never wait for a person: no credential prompt, no editor, no pager. And the history and objects are the
 * ones committed: no object shown as another (refs/replace/, which the agent can write), no parents made up by
 * .git/info/grafts (GIT_NO_REPLACE_OBJECTS does not turn those off; an empty graft file does). Alternates and
 * objects rewritten in place are not git's to refuse: the runner hashes what it must trust (git/objects.ts), and holds
 * objects/info/alternates like git's configuration (verify/runner-guard.ts).
 */
export const GIT_ENV: Readonly<Record<string, string>> = {
  GIT_TERMINAL_PROMPT: '0',
  GIT_EDITOR: 'true',
  GIT_PAGER: 'cat',
  GIT_OPTIONAL_LOCKS: '0',
  GIT_NO_REPLACE_OBJECTS: '1',
  GIT_GRAFT_FILE: process.platform === 'win32' ? 'NUL' : '/dev/null',
  // The system attributes file ($(prefix)/etc/gitattributes) applies to every checkout; its place depends on the build,
  // so it is not held like the others (verify/runner-guard.ts) but not read at all.
  GIT_ATTR_NOSYSTEM: '1',
};

/**
 * The environment of a runner git process: the runner's own (the user's, not the agent's), never waiting for input.
 * ~/.gitconfig is the agent's to write too: the runner holds it like .git/config (verify/runner-guard.ts) and puts it
 * back after every agent run, before its own git calls read it.
 */
export function hardenedGitEnv(base: NodeJS.ProcessEnv, gitFile?: string): NodeJS.ProcessEnv {
  const env = { ...base };
  for (const name of leftOut) delete env[name];
  Object.assign(env, GIT_ENV);
  // What git starts by name (a filter's program, `sh`, a credential helper) is looked for in git's own folder first:
  // a `git-lfs` the agent drops into an earlier PATH folder (~/.local/bin) does not stand in for yours there. Then on
  // PATH as the loop held it (holdRunnerPath), when it did.
  const rest = heldPath ?? base.PATH;
  if (gitFile && path.isAbsolute(gitFile))
    env.PATH = [path.dirname(gitFile), rest].filter(Boolean).join(path.delimiter);
  else if (heldPath !== undefined) env.PATH = heldPath;
  return env;
}

let heldPath: string | undefined;
let leftOut: readonly string[] = [];

/**
 * The PATH folders the runner's git looks in from now on (the loop's start: absolute folders outside the repository,
 * verify/check-env.ts), instead of the live PATH, whose folders inside the repository the agent can write; and the
 * variables it goes without, those that named a path in the repository (verify/repo-env.ts planRepoVars: a
 * GIT_EXEC_PATH or GIT_TEMPLATE_DIR there would be the agent's to fill).
 */
export function holdRunnerPath(dirs: readonly string[] | null, without: readonly string[] = []): void {
  heldPath = dirs?.join(path.delimiter);
  leftOut = [...without];
}

/** `git <hardening> <args>`: the argument list for execFile. */
export function hardenedArgs(args: readonly string[]): string[] {
  return [...HARDENED_ARGS, ...args];
}
