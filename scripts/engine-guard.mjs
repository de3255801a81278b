// The engine (dist/ralph.mjs) is copied into users' repositories and run there with plain `node`, so it
// may hold only this repository's own code: a library bundled into it would be code nobody reviewed as
// part of the engine. esbuild inlines npm imports, so the guard reads the build's metafile (every input
// file, and which file imported it) rather than the output.
import { isBuiltin } from 'node:module';

/** Folders (relative to the build's working directory) whose files may go into the engine. */
export const ENGINE_SOURCE_DIRS = ['src/', 'templates/'];

/**
 * Every input of an esbuild `metafile` that is not the repository's own code: a file under any
 * `node_modules/`, or outside `allowedDirs`. Entry points are the build's own choice and are allowed.
 * Each comes with the inputs that imported it, so the message can name the engine file to fix.
 */
export function foreignInputs(metafile, { allowedDirs = ENGINE_SOURCE_DIRS, entryPoints = [] } = {}) {
  const isOwn = (input) =>
    entryPoints.includes(input) ||
    (!input.split('/').includes('node_modules') && allowedDirs.some((dir) => input.startsWith(dir)));
  const importersOf = (input) =>
    Object.entries(metafile.inputs)
      .filter(([, info]) => info.imports.some((i) => i.path === input && !i.external))
      .map(([importer]) => importer)
      .sort();
  return Object.keys(metafile.inputs)
    .filter((input) => !isOwn(input))
    .sort()
    .map((input) => ({ input, importers: importersOf(input) }));
}

/** Imports the output leaves to run time (`external`) that are not Node built-ins. */
export function foreignExternals(metafile) {
  const found = new Set();
  for (const output of Object.values(metafile.outputs)) {
    for (const i of output.imports) if (i.external && !isBuiltin(i.path)) found.add(i.path);
  }
  return [...found].sort();
}

/** The refusal, one line per offending module; undefined when the engine is clean. */
export function engineGuardMessage(metafile, options) {
  const lines = [
    ...foreignInputs(metafile, options).map(
      ({ input, importers }) => `  ${input} (imported by ${importers.join(', ') || 'nothing: an entry point'})`,
    ),
    ...foreignExternals(metafile).map((path) => `  ${path} (left as a run-time import)`),
  ];
  if (!lines.length) return undefined;
  return `the engine (dist/ralph.mjs) must hold only ralphkit's own code (${ENGINE_SOURCE_DIRS.join(', ')}) and Node built-ins, but it would include:\n${lines.join('\n')}`;
}
