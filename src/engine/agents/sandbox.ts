// --sandbox: the agent runs under bubblewrap (Linux). It can write the repository, its scratch folders and a private
// layer over its HOME, but not the runner's files, .git/hooks, .git/config, the object store (new objects go to a
// quarantine), refs/ralphkit or the pinned tests; it lives in its own PID namespace, so when
// the sandbox ends everything it started ends with it; with --no-network it has no network at all.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { isWithin } from '../../util/repo-path.js';
import { lstatOrNull } from '../../util/read.js';
import { findExecutable } from './check.js';

/** What to run under bubblewrap, and where it may write. Paths are absolute real paths (symlinks resolved). */
export interface SandboxRequest {
  bwrap: string;
  file: string;
  args: string[];
  repoRoot: string;
  /** The common git dir (`git rev-parse --git-common-dir`): objects, refs, hooks and config live there. */
  gitDir: string;
  /** Re-bound read-only on top of the writable places; missing ones are skipped. Relative ones are under repoRoot. */
  readOnly: string[];
  /** Writable folders besides the repository. */
  scratch: string[];
  network: boolean;
  /** The user's HOME, writable: agents keep their login and caches there. */
  home?: string;
  /** Existing folders hidden behind an empty tmpfs (the verdict record's key). */
  hidden?: string[];
  /** What of `/run` is shown (readShownRun); read from the machine and the runner's environment when absent. */
  run?: string[];
  /** The host's path-named Unix sockets (readHostSockets); read when absent. */
  sockets?: string[];
  /**
   * The agent's private HOME (agents/sandbox-home.ts): `dir` bound writable at `home` instead of the user's HOME, then
   * each of `readOnly` (the user's entries) bound read-only at its own place on top.
   */
  homeLayer?: { dir: string; readOnly: string[] };
  /**
   * Git's objects as a quarantine (git/quarantine.ts): `quarantine` bound writable over <gitDir>/objects, the real
   * store read-only at `store` (the quarantine's alternate), and refs/ralphkit read-only.
   */
  objects?: { quarantine: string; store: string };
}

/**
 * Whether the sandbox can run here. A failure says it twice: as a refusal of an explicit --sandbox (`message`, `hint`),
 * and in parts for the default's one line (run/sandbox-default.ts): `reason` it cannot, and `fix`, what to type to get
 * it (none: not Linux).
 */
export type SandboxProbe =
  | { ok: true; bwrap: string }
  | { ok: false; message: string; hint: string; reason: string; fix?: string };

/** A failed probe from its parts: the refusal of an explicit --sandbox names the way out as well as the fix. */
function refusal(reason: string, fix?: string): SandboxProbe {
  return {
    ok: false,
    message: `--sandbox: ${reason}`,
    hint: fix ? `${fix}; or run with --no-sandbox` : 'run with --no-sandbox',
    reason,
    ...(fix ? { fix } : {}),
  };
}

const PROBE_TIMEOUT_MS = 10_000;
const posix = path.posix;

/** Whether the sandbox can work here: bubblewrap is installed and may create the namespaces the sandbox needs. */
export function probeSandbox(env: NodeJS.ProcessEnv): SandboxProbe {
  if (process.platform !== 'linux') return refuseNotLinux();
  const bwrap = env.RALPH_BWRAP_BIN || findExecutable('bwrap', env);
  if (!bwrap)
    return refusal(
      'bubblewrap (bwrap) is not on PATH',
      'install bubblewrap: sudo apt-get install bubblewrap (Fedora: sudo dnf install bubblewrap)',
    );
  // Finding the program proves nothing: user namespaces are often switched off (hardened kernels, containers,
  // Ubuntu's AppArmor restriction), and only starting a real sandbox shows it.
  const probe = spawnSync(
    bwrap,
    ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-pid', '--die-with-parent', 'true'],
    {
      env,
      encoding: 'utf8',
      timeout: PROBE_TIMEOUT_MS,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  if (probe.error) return refuseNoStart(bwrap, probe.error as NodeJS.ErrnoException);
  if (probe.status === 0) return { ok: true, bwrap };
  const line = firstLine(probe.stderr) || `exit code ${probe.status ?? probe.signal}`;
  return refusal(`bubblewrap cannot create its namespaces here (${line})`, renderUsernsHint());
}

function refuseNotLinux(): SandboxProbe {
  const where = process.platform === 'darwin' ? 'macOS' : process.platform;
  return refusal(`the sandbox needs Linux (bubblewrap); this is ${where}`);
}

function refuseNoStart(bwrap: string, err: NodeJS.ErrnoException): SandboxProbe {
  if (err.code === 'ETIMEDOUT')
    return refusal(
      `${bwrap} did not finish a test run in ${PROBE_TIMEOUT_MS / 1000} s`,
      `try it by hand: ${bwrap} --ro-bind / / --dev /dev --proc /proc --unshare-pid true`,
    );
  return refusal(
    `cannot start ${bwrap} (${err.code ?? err.message})`,
    'install bubblewrap: sudo apt-get install bubblewrap, or point RALPH_BWRAP_BIN at it',
  );
}

// The two switches that usually refuse unprivileged user namespaces, and the command that opens each.
function renderUsernsHint(): string {
  const apparmor = readSysctl('kernel/apparmor_restrict_unprivileged_userns');
  if (apparmor === '1')
    return 'Ubuntu restricts user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1): sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0, or give bwrap an AppArmor profile that allows userns';
  const clone = readSysctl('kernel/unprivileged_userns_clone');
  if (clone === '0')
    return 'user namespaces are off (kernel.unprivileged_userns_clone = 0): sudo sysctl kernel.unprivileged_userns_clone=1';
  return 'check kernel.apparmor_restrict_unprivileged_userns (Ubuntu 23.10+) or kernel.unprivileged_userns_clone (older Debian/Ubuntu); inside a container, the container must allow user namespaces';
}

function readSysctl(name: string): string | null {
  try {
    return readFileSync(`/proc/sys/${name}`, 'utf8').trim();
  } catch {
    return null;
  }
}

function firstLine(text: string | null | undefined): string {
  return (
    (text ?? '')
      .split('\n')
      .find((l) => l.trim() !== '')
      ?.trim() ?? ''
  );
}

/**
 * What of `/run` the sandbox shows, read-only, over the empty tmpfs it puts there. `/run` holds the sockets of
 * services that start programs on request outside the sandbox, where no PID namespace reaches them (the systemd and
 * D-Bus buses, `docker.sock`, containerd, podman, screen; `$XDG_RUNTIME_DIR` is under it), and a Unix socket needs no
 * write access to connect: an adversarial pass had such a program, outside the sandbox and its leftover scan, write
 * the work into the verification checkouts. Shown again, as what tools need and nothing that runs programs: the
 * resolver's folders (where `/etc/resolv.conf` often leads) and nscd's, NixOS's system folders, every PATH folder
 * under `/run` (fnm keeps node in `$XDG_RUNTIME_DIR/fnm_multishells`), gpg-agent's folder and the ssh-agent socket
 * (commit signing), and the folders under `/run` that `RALPH_SANDBOX_SHOW` names (`/run/postgresql` for checks that
 * use a local database's socket).
 */
export function readShownRun(env: NodeJS.ProcessEnv): string[] {
  const underRun = (p: string | undefined): p is string =>
    !!p && path.posix.isAbsolute(p) && path.posix.resolve(p).startsWith('/run/');
  const shown = [
    '/run/systemd/resolve',
    '/run/resolvconf',
    '/run/NetworkManager',
    '/run/nscd',
    '/run/current-system',
    '/run/booted-system',
    '/run/opengl-driver',
    '/run/wrappers',
  ];
  const add = (p: string) => {
    const at = path.posix.resolve(p);
    if (!shown.some((s) => isWithin(at, s))) shown.push(at);
  };
  try {
    const resolver = realpathSync('/etc/resolv.conf');
    // Its folder, not the file: NetworkManager and resolvconf replace the file by a rename, which a bound file misses.
    if (underRun(resolver)) add(path.posix.dirname(resolver));
  } catch {
    /* no resolver file: nothing to show */
  }
  for (const dir of (env.PATH ?? '').split(':')) if (underRun(dir)) add(dir);
  if (underRun(env.XDG_RUNTIME_DIR)) add(path.posix.join(env.XDG_RUNTIME_DIR, 'gnupg'));
  const ssh = env.SSH_AUTH_SOCK?.replace(/^unix:/, '');
  if (underRun(ssh)) add(ssh);
  for (const p of (env.RALPH_SANDBOX_SHOW ?? '').split(':')) if (underRun(p)) add(p);
  return shown;
}

/**
 * The host's Unix sockets on a path, that are sockets there now: those the kernel lists for this network namespace
 * (`/proc/net/unix`, the last column: the name each was bound at; `@` names are abstract, which only --no-network
 * cuts), and those found in HOME (its top level, and two levels into each of its dot folders: `~/.ssh/cm-…`,
 * `~/.docker/desktop/docker.sock`): ssh's ControlMaster binds at a temporary name and then links its socket to the
 * ControlPath, so the kernel's name is gone (an adversarial pass reached a master that way). A listed name that is
 * no socket now is left out: bwrap cannot bind over a path that does not exist.
 */
export function readHostSockets(home: string | undefined = process.env.HOME): string[] {
  const out = new Set<string>();
  let text = '';
  try {
    text = readFileSync('/proc/net/unix', 'utf8');
  } catch {
    /* not Linux, or no /proc: only the scan */
  }
  for (const line of text.split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    const p = fields.length >= 8 ? fields.slice(7).join(' ') : '';
    if (p.startsWith('/') && lstatOrNull(p)?.isSocket()) out.add(p);
  }
  // HOME's top level, and two levels into each of its dot folders (not into its other folders).
  if (home && path.isAbsolute(home)) for (const p of findSockets(home, 3, (name) => name.startsWith('.'))) out.add(p);
  return [...out];
}

/**
 * Socket files in `dir` and `depth - 1` levels below it, links not followed; `into` says which of `dir`'s own folders
 * to go into (all of those below).
 */
function findSockets(dir: string, depth: number, into: (name: string) => boolean = () => true): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isSocket()) return [p];
    return e.isDirectory() && depth > 1 && into(e.name) ? findSockets(p, depth - 1) : [];
  });
}

/**
 * Of `sockets`, those the sandbox would show and a process in it could connect to: not under its private `/tmp`,
 * `/dev`, `/proc` or `/run` (hidden there, or shown on purpose: the resolver's, nscd's), not in a folder it may write
 * (its own sockets), not commit signing's (gpg-agent's, the ssh agent's; they sign, they start nothing) and not one
 * `RALPH_SANDBOX_SHOW` names. Pure.
 */
export function planCoveredSockets(
  req: Pick<SandboxRequest, 'repoRoot' | 'gitDir' | 'scratch'>,
  sockets: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  const writable = [req.repoRoot, req.gitDir, ...req.scratch].map((p) => posix.resolve(p));
  const ssh = env.SSH_AUTH_SOCK?.replace(/^unix:/, '');
  const shownByUser = (env.RALPH_SANDBOX_SHOW ?? '').split(':').filter((p) => posix.isAbsolute(p));
  return sockets.filter((s) => {
    if (['/tmp', '/dev', '/proc', '/run'].some((d) => isWithin(s, d))) return false;
    if (writable.some((d) => isWithin(s, d))) return false;
    if (/^S\.gpg-agent/.test(posix.basename(s)) || s === ssh) return false;
    return !shownByUser.some((d) => isWithin(s, posix.resolve(d)));
  });
}

/** The bwrap command line that runs `req.file req.args` in the sandbox (pure but for `req.run` and `req.sockets`, read when absent). */
export function planSandboxCommand(req: SandboxRequest): { file: string; args: string[] } {
  const args = [
    // Everything is an exception to this: the whole file system, read-only.
    '--ro-bind',
    '/',
    '/',
    // A fresh /dev and a /proc of the new PID namespace (the host's would show, and let it signal, every process).
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    // Before any bind: a repository or scratch folder under /tmp (tests, CI) is bound on top of the private /tmp,
    // where a tmpfs mounted after it would hide it.
    '--tmpfs',
    '/tmp',
    // The host's services, by their sockets: hidden (readShownRun), with the few folders tools need shown again.
    '--tmpfs',
    '/run',
    ...(req.run ?? readShownRun(process.env)).flatMap((p) => ['--ro-bind-try', p, p]),
    ...renderBinds(planBinds(req)),
    // Every other listening Unix socket the host has on a path the sandbox shows (a Docker Desktop socket in HOME,
    // LXD's under /var/lib): an empty file bound over it, so connect() finds no service (readHostSockets).
    ...planCoveredSockets(req, req.sockets ?? readHostSockets()).flatMap((s) => ['--ro-bind-try', '/dev/null', s]),
    // Folders the agent must not read at all (the key that seals the runner's verdict record), each an empty tmpfs
    // over what is there; after the binds, since they sit inside HOME.
    ...(req.hidden ?? []).flatMap((dir) => ['--tmpfs', posix.resolve(dir)]),
    // Running as root, bwrap keeps every capability inside, and CAP_SYS_ADMIN can remount a read-only bind
    // writable; dropping them changes nothing for other users, who have none in the sandbox anyway.
    '--cap-drop',
    'ALL',
    // When the namespace's init dies, the kernel kills every process in it: setsid and double forks included.
    '--unshare-pid',
    // System V shared memory, semaphores and message queues of its own: they outlive a process, and the checks
    // (sandboxed apart) would otherwise find what the agent left there.
    '--unshare-ipc',
    // Without it bwrap returns when the command exits, but the sandbox's init lives on while anything in it runs
    // (holding the agent's output pipes open), and a SIGKILLed bwrap leaves the sandbox running. With it the init
    // gets SIGKILL when bwrap ends, and a runner that dies takes bwrap with it.
    '--die-with-parent',
    // setsid(): without a controlling terminal the agent cannot push keystrokes into the user's (TIOCSTI).
    // Its stdin is a pipe, which a new session does not touch.
    '--new-session',
    ...(req.network ? [] : ['--unshare-net']),
    '--chdir',
    req.repoRoot,
    '--',
    req.file,
    ...req.args,
  ];
  return { file: req.bwrap, args };
}

interface Bind {
  path: string;
  /** What is bound there, when not the same path of the host (the HOME layer, the objects quarantine). */
  source?: string;
  writable: boolean;
  /** Missing is an error (the repository, a scratch folder) rather than skipped (a pinned file not written yet). */
  required: boolean;
}

/**
 * Which paths to bind, in the order bwrap must apply them. bwrap mounts in argument order, and a bind hides whatever
 * was mounted beneath its destination before it: a parent bound after its child undoes the child. So binds go
 * shallowest first: every read-only path comes after the writable folder it sits in, and a scratch folder inside a
 * read-only one comes after that.
 */
function planBinds(req: SandboxRequest): Bind[] {
  const writable: Bind[] = [req.repoRoot, ...req.scratch].map((p) => ({
    path: posix.resolve(p),
    writable: true,
    required: true,
  }));
  if (!isWithin(req.gitDir, req.repoRoot))
    writable.push({ path: posix.resolve(req.gitDir), writable: true, required: true });
  const objects = planObjectBinds(req);
  // A repository or scratch folder directly in HOME is also one of the user's entries: it stays writable.
  const home = planHomeBinds(req, new Set(writable.map((b) => b.path)));
  writable.push(...home.writable, ...objects.writable);
  for (const b of writable)
    if (b.path === '/')
      throw new Error('sandbox: refusing to make / writable (repoRoot, gitDir or a scratch folder is /)');
  // Hooks and config are protected whatever the caller listed: they are what a hostile commit would use.
  const readOnly = [
    ...req.readOnly.map((p) => posix.resolve(req.repoRoot, p)),
    posix.join(req.gitDir, 'hooks'),
    posix.join(req.gitDir, 'config'),
    ...objects.readOnly,
  ];
  const binds = dedupeBinds([
    ...writable,
    ...readOnly.map((p) => ({ path: p, writable: false, required: false })),
    ...home.readOnly,
    ...objects.store,
  ]);
  // Hidden folders too: renaming their parent would carry the empty tmpfs away and leave the real folder to replace.
  const guarded = [req.repoRoot, req.gitDir, ...readOnly, ...(req.hidden ?? [])].map((p) => posix.resolve(p));
  return sortBinds([...binds, ...planPinnedParents(guarded, binds)]);
}

/** HOME: the user's, writable (no layer), or the layer with the user's entries read-only on it. */
function planHomeBinds(req: SandboxRequest, keepWritable: Set<string>): { writable: Bind[]; readOnly: Bind[] } {
  if (!req.home || !posix.isAbsolute(req.home) || posix.resolve(req.home) === '/')
    return { writable: [], readOnly: [] };
  const home = posix.resolve(req.home);
  if (!req.homeLayer) return { writable: [{ path: home, writable: true, required: false }], readOnly: [] };
  const entries = req.homeLayer.readOnly
    .map((p) => posix.resolve(p))
    .filter((p) => p !== home && isWithin(p, home) && !keepWritable.has(p));
  return {
    writable: [{ path: home, source: posix.resolve(req.homeLayer.dir), writable: true, required: true }],
    readOnly: entries.map((p) => ({ path: p, writable: false, required: false })),
  };
}

/**
 * The object store: new objects go to the quarantine bound over it, existing ones are read through the quarantine's
 * alternate (the real store, read-only); the runner's refs are read-only.
 */
function planObjectBinds(req: SandboxRequest): { writable: Bind[]; readOnly: string[]; store: Bind[] } {
  if (!req.objects) return { writable: [], readOnly: [], store: [] };
  const objects = posix.join(posix.resolve(req.gitDir), 'objects');
  return {
    writable: [{ path: objects, source: posix.resolve(req.objects.quarantine), writable: true, required: true }],
    readOnly: [posix.join(posix.resolve(req.gitDir), 'refs', 'ralphkit')],
    store: [{ path: posix.resolve(req.objects.store), source: objects, writable: false, required: false }],
  };
}

/**
 * A directory holding a mount point can still be renamed, and the mounts move with it: `mv .git g && cp -a g .git`
 * would leave a .git with writable hooks on the host. A mount point itself cannot be renamed or removed (EBUSY), so
 * every directory between a guarded path and the writable folder it sits in is bound onto itself.
 */
function planPinnedParents(guarded: string[], binds: Bind[]): Bind[] {
  const parents = new Map<string, Bind>();
  for (const target of guarded) {
    for (let dir = posix.dirname(target); dir !== '/' && !binds.some((b) => b.path === dir); dir = posix.dirname(dir)) {
      // Only the host's writable folders matter: under a read-only bind nothing can be renamed, and the private
      // /tmp is thrown away with the sandbox.
      const near = nearestBind(dir, binds);
      if (!near?.writable) break;
      // Inside the HOME layer, the layer's own folder (the user's would be made writable).
      const source = near.source ? posix.join(near.source, posix.relative(near.path, dir)) : undefined;
      parents.set(dir, { path: dir, ...(source ? { source } : {}), writable: true, required: false });
    }
  }
  return [...parents.values()];
}

/** The deepest bind that holds `p`. */
function nearestBind(p: string, binds: Bind[]): Bind | undefined {
  return binds.filter((b) => isWithin(p, b.path)).sort((a, b) => b.path.length - a.path.length)[0];
}

function dedupeBinds(binds: Bind[]): Bind[] {
  const seen = new Map<string, Bind>();
  for (const b of binds) {
    const before = seen.get(b.path);
    // Read-only wins when the same path is listed both ways.
    seen.set(
      b.path,
      before ? { ...before, writable: before.writable && b.writable, required: before.required || b.required } : b,
    );
  }
  return [...seen.values()];
}

function sortBinds(binds: Bind[]): Bind[] {
  const depth = (p: string) => p.split('/').length;
  // Paths of one depth never hold each other: sorting them by name only keeps the command line stable (by code
  // unit: localeCompare's first call loads the ICU collator, about 10 ms of every start).
  const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...binds].sort((a, b) => depth(a.path) - depth(b.path) || byName(a.path, b.path));
}

// The -try forms skip a missing source: a pinned file not written yet, a HOME that does not exist.
function renderBinds(binds: Bind[]): string[] {
  return binds.flatMap((b) => [
    b.writable ? (b.required ? '--bind' : '--bind-try') : '--ro-bind-try',
    b.source ?? b.path,
    b.path,
  ]);
}
