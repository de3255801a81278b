// Moves a finished build from its private folder into dist/ so that a process reading dist/ while a
// build runs never sees a half-written file, and the cli.js in place only ever loads its own chunks.
import { rm, rename, readdir } from 'node:fs/promises';
import path from 'node:path';

/** The CLI's chunks are dist/<CHUNK_PREFIX><name>-<hash>.js, beside cli.js. */
export const CHUNK_PREFIX = 'cli-';

/** The files bin/ralphkit.js and ralphkit's install load by name: the engine, then the CLI's two entries. */
export const ENTRIES = ['ralph.mjs', 'install.js', 'cli.js'];

/**
 * Chunks first: their names carry a hash of their content, so a new one never replaces a file that the
 * cli.js or install.js in place loads, and the new entries never load an old one. Then each entry point is one rename,
 * and last the chunks of older builds are removed, so dist/ holds one build.
 * @param {string} from the private build folder
 * @param {string} to dist/
 * @param {string[]} chunks the chunk file names of this build
 */
export async function publish(from, to, chunks) {
  for (const name of chunks) await rename(path.join(from, name), path.join(to, name));
  for (const name of ENTRIES) await rename(path.join(from, name), path.join(to, name));
  // A folder cannot be renamed over a full one: move the old page aside first, so it is missing only
  // between two renames, and remove it afterwards.
  const page = path.join(to, 'page');
  const oldPage = path.join(to, `page.old-${process.pid}`);
  const hadPage = await rename(page, oldPage).then(
    () => true,
    (e) => (e.code === 'ENOENT' ? false : Promise.reject(e)),
  );
  await rename(path.join(from, 'page'), page).catch((e) => {
    if (e.code !== 'ENOENT') throw e;
  });
  if (hadPage) await rm(oldPage, { recursive: true, force: true });
  const current = new Set(chunks);
  for (const name of await readdir(to)) {
    if (name.startsWith(CHUNK_PREFIX) && name.endsWith('.js') && !current.has(name))
      await rm(path.join(to, name), { force: true });
  }
}
