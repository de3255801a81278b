// --sandbox: the agent's HOME is a private layer (issue #26, "the sandbox as a wall"). bubblewrap 0.8 has no
// overlay, so the layer is a runner-owned folder bound writable at $HOME, and every entry of the user's real HOME
// is bound read-only on top of it at its own name: the toolchain in HOME (nvm, ~/.local/bin, pyenv, cargo, an agent
// CLI) runs, nothing in it can be changed, and whatever new file the agent writes in HOME (~/.npmrc, ~/.claude.json
// by an atomic rename) lands in the layer, never in the user's HOME. This file decides which paths go which way
// (pure); run/agent-home.ts makes and seeds the layer.
import path from 'node:path';

/**
 * The agents' own state: copied from the user's HOME into the layer when the loop starts, then the agent's to
 * write (its login, settings, history). A copy and not the real folder: a hook in ~/.claude/settings.json would
 * run in the user's own later sessions.
 */
export const AGENT_STATE: readonly string[] = ['.claude', '.claude.json', '.codex'];

/** Left out of the copy: other sessions' transcripts (large, and none of this agent's business). */
export const STATE_SKIPPED: readonly string[] = [
  '.claude/projects',
  '.codex/sessions',
  '.codex/archived_sessions',
  '.codex/log',
];

/**
 * Package managers' caches and stores: left out, so the agent's tools make them afresh in the layer (empty: slower,
 * and the network is needed to fill them) instead of finding the user's read-only, which most of them cannot use
 * (go, cargo and uv take a lock file there, npm and pip write as they read). Never the user's writable: a poisoned
 * build cache or extracted crate would run in the user's own later builds.
 */
export const LEFT_OUT: readonly string[] = [
  '.npm',
  '.pnpm-store',
  '.yarn/berry/cache',
  '.gradle',
  '.cache/go-build',
  '.cache/pip',
  '.cache/uv',
  '.cache/yarn',
  '.cache/pnpm',
  '.cache/node-gyp',
  '.cache/deno',
  '.cache/pypoetry/cache',
  '.cache/ccache',
  '.cache/sccache',
  '.cargo/registry',
  '.cargo/git',
  '.cargo/.package-cache',
  '.cargo/.package-cache-mutate',
  '.cargo/.global-cache',
  '.m2/repository',
  'go/pkg/mod',
];

/**
 * Folders that hold both tools and state (~/.cache/ralphkit-ci/node-24, ~/.cargo/bin, ~/.config/gh): a folder of the
 * layer whose entries are the user's, read-only, but for those copied or left out, and where new ones may be made.
 * Parents before children.
 */
export const MERGED: readonly string[] = [
  '.cache',
  '.cache/pypoetry',
  '.config',
  '.cargo',
  '.m2',
  '.yarn',
  '.yarn/berry',
  'go',
  'go/pkg',
];

export interface HomeListing {
  /** The user's real HOME, absolute. */
  home: string;
  /** The names in it. */
  entries: readonly string[];
  /** The names in each MERGED folder that is a folder (not a link), by its path relative to HOME. */
  merged: Readonly<Record<string, readonly string[]>>;
  /** More state paths relative to HOME (`.claude-work`, or `.config/claude` in a MERGED folder): CLAUDE_CONFIG_DIR or CODEX_HOME inside HOME. */
  extraState?: readonly string[];
}

export interface HomeLayerPlan {
  /** Absolute paths of the user's HOME bound read-only at the same place in the layer. */
  readOnly: string[];
  /** Paths (relative to HOME) copied into the layer at loop start. */
  copy: string[];
  /** MERGED folders (relative to HOME) the layer holds as folders of its own, parents first. */
  merged: string[];
}

/** Which of HOME's entries the layer copies, which it binds read-only, and which it leaves out. */
export function planHomeLayer(listing: HomeListing): HomeLayerPlan {
  const state = new Set([...AGENT_STATE, ...(listing.extraState ?? [])]);
  const plan: HomeLayerPlan = { readOnly: [], copy: [], merged: [] };
  const walk = (rel: string, names: readonly string[]) => {
    for (const name of [...names].sort()) {
      const full = rel ? `${rel}/${name}` : name;
      if (state.has(full)) plan.copy.push(full);
      else if (LEFT_OUT.includes(full)) continue;
      else if (MERGED.includes(full) && listing.merged[full]) {
        plan.merged.push(full);
        walk(full, listing.merged[full]);
      } else plan.readOnly.push(path.posix.join(listing.home, full));
    }
  };
  walk('', listing.entries);
  return plan;
}

/**
 * The state path the layer copies for a configuration folder `dir` (CLAUDE_CONFIG_DIR, CODEX_HOME): its first name
 * under `home`, or its first below a MERGED folder (`~/.config/claude`: `.config/claude`); null outside HOME or for a
 * MERGED folder itself.
 */
export function statePathOf(home: string, dir: string | undefined): string | null {
  if (!dir || !path.isAbsolute(dir)) return null;
  const rel = path.relative(home, dir);
  if (!rel || rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) return null;
  const parts = rel.split(path.sep);
  // The first path below the deepest MERGED folder holding it.
  let depth = 1;
  while (depth < parts.length && MERGED.includes(parts.slice(0, depth).join('/'))) depth++;
  return MERGED.includes(parts.slice(0, depth).join('/')) ? null : parts.slice(0, depth).join('/');
}
