// With --sandbox: the agent's command under bubblewrap, and the sandbox its checks run in (SPEC §6).
import { heldGitDirs } from '../verify/nested-git.js';
import type { RunContext } from '../types.js';
import type { CheckSandbox } from '../verify/types.js';
import { existsSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { readTextOrNull } from '../../util/read.js';
import { runGit } from '../git/git.js';
import path from 'node:path';
import { runsDir } from '../store/layout.js';
import { type RunTrust } from '../verify/trust.js';
import { ENGINE_FILES } from '../verify/runner-guard.js';
import { planSandboxCommand, probeSandbox } from '../agents/sandbox.js';
import { keyDir } from '../store/verdict-record.js';
import { LoopFailure } from '../errors.js';
import { prepareAgentHome } from './agent-home.js';
import { realHome } from '../agents/home-listing.js';
import { listQuarantines, makeQuarantine, migrateQuarantine, SANDBOX_STORE } from '../git/quarantine.js';
import { readObjectFormat } from '../git/objects.js';
import { isAlive, ownProcessStart } from '../processes.js';
import { isObjectId } from '../git/parse.js';

/** A writable folder for files the agent writes itself (Codex's last message): the rest of ralph/.runs/ is read-only in the sandbox. */
export function ensureScratch(dir: string): string {
  const scratch = path.join(dir, 'scratch');
  mkdirSync(scratch, { recursive: true });
  return scratch;
}

// Whether bubblewrap works, asked once per run (each ask starts a sandbox): keyed by the run's environment, which
// the start's default (run.ts) and every later sandbox of the run share.
const PROBES = new WeakMap<NodeJS.ProcessEnv, ReturnType<typeof probeSandbox>>();

/** probeSandbox(env), once per environment object. */
export function probeSandboxOnce(env: NodeJS.ProcessEnv): ReturnType<typeof probeSandbox> {
  const probe = PROBES.get(env) ?? probeSandbox(env);
  PROBES.set(env, probe);
  return probe;
}

export interface AgentSandbox {
  file: string;
  args: string[];
  /** After the agent exited: its new objects moved from the quarantine into the store (hashed against their ids). */
  after(): Promise<void>;
}

/**
 * The agent's command under bubblewrap: the runner's files, git's hooks and config and the pinned tests read-only;
 * HOME a private layer over the user's (run/agent-home.ts); new git objects into a quarantine, the object store and
 * the runner's refs read-only (git/quarantine.ts).
 */
export async function sandboxCommand(
  run: RunContext,
  trust: RunTrust,
  agent: { file: string; args: string[] },
  scratch: string,
): Promise<AgentSandbox> {
  const base = checkSandbox(run, trust) as CheckSandbox;
  // The agent commits: the repository and git's common dir stay writable to it (planSandboxCommand keeps its hooks
  // and config read-only, a linked worktree's common dir included).
  const userConfig = base.readOnly.filter((p) => p !== trust.topLevel && p !== trust.gitDir);
  // In a linked worktree (--worktree, --parallel) the common dir's HEAD and index are your own tree's, and so is the
  // branch checked out there: not the agent's. Told by its git dir of its own, not by a `.git` file: a separate git
  // dir (`git init --separate-git-dir`) is named by one too, and there HEAD and index are the agent's to commit with.
  const own = trust.guard?.ownGitDir ?? trust.gitDir;
  const linked = own !== trust.gitDir;
  const worktrees = worktreeFolders(trust.gitDir, own);
  const mainTree = linked
    ? [path.join(trust.gitDir, 'HEAD'), path.join(trust.gitDir, 'index'), ...(await holdUserBranch(trust))]
    : [];
  const readOnly = [
    ...ENGINE_FILES,
    path.relative(run.paths.repoRoot, runsDir(run.paths.repoRoot)),
    ...(trust.pins?.paths ?? []),
    ...userConfig,
    ...mainTree,
    // Your submodules' git folders (their index, configuration, hooks): your git status runs a status inside each;
    // and where git keeps them, so that none is planted there for a submodule `git submodule update` would make.
    ...(trust.nested ? heldGitDirs(trust.nested) : []),
    modulesFolder(trust.gitDir),
    ...worktrees.readOnly,
    // Replace refs: your git shows the object one names in place of the one it replaces (verify/replace-refs.ts).
    replaceFolder(trust.gitDir),
  ];
  const home = realHome(base.home);
  const objects = await prepareQuarantine(run, trust);
  const plan = planSandboxCommand({
    ...base,
    home,
    file: agent.file,
    args: agent.args,
    repoRoot: trust.topLevel,
    gitDir: trust.gitDir,
    readOnly,
    // The agent's own git dir in a linked worktree: writable inside the read-only worktrees folder.
    scratch: [realpathSync(scratch), ...worktrees.writable],
    ...(home ? { homeLayer: prepareAgentHome(run, home) } : {}),
    objects: { quarantine: objects.quarantine, store: SANDBOX_STORE },
  });
  return { ...plan, after: objects.after };
}

/**
 * git's folder of submodule repositories (`<common>/modules`), made empty when missing so that its read-only bind
 * covers what the agent would add. `git submodule update --init` takes a repository it finds there as the
 * submodule's, with its configuration and hooks: an adversarial pass planted one for a submodule its commit added.
 */
function modulesFolder(gitDir: string): string {
  const dir = path.join(gitDir, 'modules');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** `<common>/refs/replace`, made empty when missing, so that its read-only bind covers a loose replace ref. */
function replaceFolder(gitDir: string): string {
  const dir = path.join(gitDir, 'refs', 'replace');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * git's folder of the linked worktrees' own git dirs (`<common>/worktrees`), read-only and made when missing (as
 * modulesFolder): a `commondir` the agent writes into the one of a worktree of yours (`git worktree add ../hotfix`)
 * sends your git there to a configuration of its own, whose `core.fsmonitor` your `git status` runs (an adversarial
 * pass did). The agent's own, when it works in a linked worktree (--worktree, --parallel), is writable on top (its
 * HEAD and index: it commits), but for its `commondir`.
 */
function worktreeFolders(gitDir: string, own: string): { readOnly: string[]; writable: string[] } {
  const folder = path.join(gitDir, 'worktrees');
  mkdirSync(folder, { recursive: true });
  const mine = path.dirname(own) === folder ? [own] : [];
  return { readOnly: [folder, ...mine.map((dir) => path.join(dir, 'commondir'))], writable: mine };
}

/**
 * A fresh quarantine for this run (and the ones runners killed mid-iteration left, moved in first: their agents'
 * commits are on the branch already), and refs/ralphkit as a folder, so that its read-only bind covers loose refs
 * the agent would add.
 */
async function prepareQuarantine(
  run: RunContext,
  trust: RunTrust,
): Promise<{ quarantine: string; after(): Promise<void> }> {
  const store = path.join(trust.gitDir, 'objects');
  mkdirSync(path.join(trust.gitDir, 'refs', 'ralphkit'), { recursive: true });
  const migrate = await quarantineMover(run, trust.topLevel, store);
  for (const dir of listQuarantines(store)) if (!isAlive(...ownerOf(dir))) await migrate(dir);
  const quarantine = makeQuarantine(store, `${process.pid}~${ownProcessStart() ?? ''}`);
  return { quarantine, after: () => migrate(quarantine) };
}

/**
 * The quarantines of runners that are gone, moved into the store before the first git call of a run: a runner
 * killed after its sandboxed agent committed leaves HEAD at a commit whose objects are only there, and every git
 * command that reads HEAD (the start's status) would fail on it ("bad object HEAD").
 */
export async function adoptDeadQuarantines(run: RunContext, top: string, commonDir: string): Promise<void> {
  const store = path.join(commonDir, 'objects');
  const dead = listQuarantines(store).filter((dir) => !isAlive(...ownerOf(dir)));
  if (!dead.length) return;
  const migrate = await quarantineMover(run, top, store);
  for (const dir of dead) await migrate(dir);
}

async function quarantineMover(run: RunContext, top: string, store: string): Promise<(dir: string) => Promise<void>> {
  const format = await readObjectFormat(top);
  return async (dir: string) => {
    const m = await migrateQuarantine(top, format, dir, store);
    if (m.dropped.length)
      run.emit({
        type: 'warn',
        message: `--sandbox: ${m.dropped.length} object(s) the agent's git wrote were not taken into the repository (${m.dropped.slice(0, 3).join('; ')}): commits that need them cannot be read, and their claims fail`,
      });
  };
}

/** The runner that made a quarantine (`tmp_objdir-ralph-<pid>~<start>-<random>`). */
function ownerOf(dir: string): [number, number | undefined] {
  const m = /-(\d+)~(\d*)-[0-9a-f]+$/.exec(path.basename(dir));
  return m ? [Number(m[1]), m[2] ? Number(m[2]) : undefined] : [0, undefined];
}

/**
 * The gh CLI's folder (its login, hosts.yml, may hold the user's token), as gh looks for it: GH_CONFIG_DIR, else
 * $XDG_CONFIG_HOME/gh, else ~/.config/gh. Hidden from the agent and its checks when --deliver pr or pr-merge uses it.
 */
function ghConfigDir(env: NodeJS.ProcessEnv): string | null {
  if (env.GH_CONFIG_DIR) return env.GH_CONFIG_DIR;
  if (env.XDG_CONFIG_HOME) return path.join(env.XDG_CONFIG_HOME, 'gh');
  return env.HOME ? path.join(env.HOME, '.config', 'gh') : null;
}

/**
 * With --sandbox, checks run under bubblewrap too: they execute the agent's code. Writable: the checkout and HOME
 * (package managers keep caches there); read-only: the repository itself, git's common dir (outside the repository for a
 * linked worktree or a separate git dir: the main repository's hooks, config and refs) and the global git configuration; hidden:
 * the key that seals the verdict record (its folder exists: the runner creates the key at start, verify/trust.ts), and with
 * --deliver pr or pr-merge the gh CLI's login.
 */
export function checkSandbox(run: RunContext, trust: RunTrust): CheckSandbox | undefined {
  if (!run.options.sandbox) return undefined;
  // The start already proved bubblewrap works.
  const probe = probeSandboxOnce(run.io.env);
  if (!probe.ok) throw new LoopFailure(probe.message, probe.hint);
  const home = run.io.env.HOME;
  const hidden = [
    keyDir(run.io.env),
    ...(run.options.deliver === 'pr' || run.options.deliver === 'pr-merge' ? [ghConfigDir(run.io.env)] : []),
  ]
    .filter((dir): dir is string => !!dir && existsSync(dir))
    .map((dir) => realpathSync(dir));
  const userConfig = home ? [path.join(home, '.gitconfig'), path.join(home, '.config', 'git')] : [];
  return {
    bwrap: probe.bwrap,
    home,
    readOnly: [trust.topLevel, trust.gitDir, ...userConfig],
    hidden,
    network: run.options.network,
  };
}
/**
 * The loose ref file of the branch checked out in your own tree, to be bound read-only: written first with the value
 * it has when it is only in packed-refs (the same ref to git), so that the agent cannot create one over it. A
 * detached HEAD holds no branch.
 */
async function holdUserBranch(trust: RunTrust): Promise<string[]> {
  const head = /^ref: (refs\/heads\/\S+)\s*$/.exec(readTextOrNull(path.join(trust.gitDir, 'HEAD')) ?? '');
  if (!head) return [];
  const file = path.join(trust.gitDir, ...head[1].split('/'));
  if (!existsSync(file)) {
    const sha = (await runGit(trust.topLevel, ['rev-parse', '--verify', '-q', head[1]])).stdout.trim();
    if (!isObjectId(sha)) return [];
    mkdirSync(path.dirname(file), { recursive: true });
    try {
      writeFileSync(file, `${sha}\n`, { flag: 'wx' });
    } catch (err) {
      // Written meanwhile (your own git in your tree): that one is held.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  return [file];
}
