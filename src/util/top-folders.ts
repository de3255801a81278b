// Node built-ins only: the engine bundle (ralph.mjs) imports this too.

/** The distinct first segments of repository-relative `/` paths, sorted: the folders (or root files) to name in `git add`. */
export function topFolders(paths: readonly string[]): string[] {
  return [...new Set(paths.map((p) => p.split('/')[0]))].sort();
}
