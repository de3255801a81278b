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
export const STATE_SKIPPED: readonly string[] = ['.claude/projects', '.codex/sessions', '.codex/archived_sessions', '.codex/log'];

/** Caches that must be writable and are only caches: an empty folder of the layer's own (not seeded). */
export const FRESH_CACHES: readonly string[] = ['.npm'];

/**
 * Folders that hold both tools and state (~/.cache/ralphkit-ci/node-24, ~/.cache/ms-playwright; ~/.config/gh): a
 * folder of the layer whose existing entries are the user's, read-only, and where new ones may be made (a cache of
 * a tool the user never ran).
 */
export const MERGED: readonly string[] = ['.cache', '.config'];

export interface HomeListing {
  /** The user's real HOME, absolute. */
  home: string;
  /** The names in it. */
  entries: readonly string[];
  /** The names in each MERGED folder that exists. */
  merged: Readonly<Record<string, readonly string[]>>;
  /** More state paths relative to HOME (`.claude-work`, or `.config/claude` in a MERGED folder): CLAUDE_CONFIG_DIR or CODEX_HOME inside HOME. */
  extraState?: readonly string[];
}

export interface HomeLayerPlan {
  /** Absolute paths of the user's HOME bound read-only at the same place in the layer. */
  readOnly: string[];
  /** Names (relative to HOME) copied into the layer at loop start. */
  copy: string[];
  /** Folders (relative to HOME) made empty in the layer. */
  fresh: string[];
}

/** Which of HOME's entries the layer copies, which it binds read-only, and which it makes empty. */
export function planHomeLayer(listing: HomeListing): HomeLayerPlan {
  const state = new Set([...AGENT_STATE, ...(listing.extraState ?? [])]);
  const present = new Set(listing.entries);
  const readOnly: string[] = [];
  const copy: string[] = [];
  const fresh = new Set<string>(FRESH_CACHES);
  for (const name of [...listing.entries].sort()) {
    if (state.has(name)) copy.push(name);
    else if (FRESH_CACHES.includes(name)) continue;
    else if (MERGED.includes(name) && listing.merged[name]) {
      for (const sub of [...listing.merged[name]].sort()) {
        const rel = `${name}/${sub}`;
        if (state.has(rel)) copy.push(rel);
        else readOnly.push(path.posix.join(listing.home, rel));
      }
    } else readOnly.push(path.posix.join(listing.home, name));
  }
  for (const name of MERGED) if (!present.has(name)) fresh.add(name);
  return { readOnly, copy, fresh: [...fresh].sort() };
}

/**
 * The state path the layer copies for a configuration folder `dir` (CLAUDE_CONFIG_DIR, CODEX_HOME): its first name
 * under `home`, or its first two inside a MERGED folder (`~/.config/claude`: `.config/claude`); null outside HOME.
 */
export function statePathOf(home: string, dir: string | undefined): string | null {
  if (!dir || !path.isAbsolute(dir)) return null;
  const rel = path.relative(home, dir);
  if (!rel || rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) return null;
  const parts = rel.split(path.sep);
  if (MERGED.includes(parts[0])) return parts.length > 1 ? `${parts[0]}/${parts[1]}` : null;
  return parts[0];
}
