// The pins of a loop, taken once (SPEC §6): which files of the plan commit are pinned, and their bytes, read from the
// commit down with every object hashed against its id (git/objects.ts). The runner holds those bytes for the whole
// run and writes them into every verification checkout (verify/pin-apply.ts): the object store, which the agent can
// rewrite under the same ids, is never read for a pinned file again.
import type { Prd } from '../../prd/types.js';
import type { Pins } from '../types.js';
import { readObjectFormat, readVerifiedObjects, readVerifiedTree } from '../git/objects.js';
import { allChecks, PINNED_SECTIONS, planPinnedPaths, planScriptNames, readRunnerKeys, readScripts, readSection } from './pins.js';

/**
 * The pins of `prd` at `commit`, with the bytes of every pinned file and of the package.json and config files whose
 * scripts and sections are pinned. Throws ObjectMismatch (git/objects.ts) when an object the commit names is
 * missing or does not hash to its id.
 */
export async function readPins(top: string, commit: string, prd: Prd): Promise<Pins> {
  const format = await readObjectFormat(top);
  const tree = await readVerifiedTree(top, format, commit);
  const files = [...tree.keys()];
  const paths = planPinnedPaths(files, prd);
  const byDir = new Map<string, string[]>();
  for (const { dir, name } of allChecks(prd).flatMap(planScriptNames)) byDir.set(dir, [...(byDir.get(dir) ?? []), name]);
  // The root manifest's runner keys are pinned even when no check runs a script (`npx jest` reads them too).
  if (tree.has('package.json') && !byDir.has('')) byDir.set('', []);
  const manifestFiles = [...byDir.keys()].map((dir) => (dir ? `${dir}/package.json` : 'package.json'));
  const wanted = [...new Set([...paths, ...manifestFiles, ...PINNED_SECTIONS.map((s) => s.file)])].filter((f) => tree.has(f) && tree.get(f)!.mode !== '160000');
  const blobs = await readVerifiedObjects(top, format, 'blob', wanted.map((f) => tree.get(f)!.oid));
  const readable = new Set(wanted);
  const bytesOf = (file: string): Buffer | null => (readable.has(file) ? blobs.get(tree.get(file)!.oid)! : null);
  const read = (file: string): string | null => bytesOf(file)?.toString('utf8') ?? null;

  const manifests: Pins['manifests'] = [];
  for (const [dir, names] of byDir) {
    const file = dir ? `${dir}/package.json` : 'package.json';
    if (paths.includes(file) || !tree.has(file)) continue;
    const text = read(file);
    const defined = readScripts(text, names);
    // A script the plan commit does not define may be the story's to add; only npm's pre/post hooks around a
    // defined script are pinned as absent, since they could rewrite the tests right before they run.
    const scripts = Object.fromEntries(Object.entries(defined).filter(([name, v]) => v !== null || isHookOf(name, defined)));
    manifests.push({ file, scripts, keys: readRunnerKeys(text) });
  }
  const sections: Pins['sections'] = [];
  for (const { file, header } of PINNED_SECTIONS) {
    if (paths.includes(file)) continue;
    sections.push({ file, header, text: readSection(read(file), header) });
  }
  const held = new Map<string, Buffer>();
  for (const p of paths) {
    const bytes = bytesOf(p);
    if (bytes) held.set(p, bytes);
  }
  return { commit, paths, manifests, sections, absent: prd.protectDefaults !== false, format, tree, held };
}

function isHookOf(name: string, defined: Record<string, string | null>): boolean {
  const m = /^(pre|post)(.+)$/.exec(name);
  return m !== null && typeof defined[m[2]] === 'string';
}
