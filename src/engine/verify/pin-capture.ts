// The pins of a loop, taken once (SPEC §6): which files of the plan commit are pinned, and their bytes, read from the
// commit down with every object hashed against its id (git/objects.ts). The runner holds those bytes for the whole
// run and writes them into every verification checkout (verify/pin-apply.ts): the object store, which the agent can
// rewrite under the same ids, is never read for a pinned file again.
import path from 'node:path';
import type { Prd } from '../../prd/types.js';
import type { Pins } from './types.js';
import { readObjectFormat, readVerifiedObjects, readVerifiedTree } from '../git/objects.js';
import {
  allChecks,
  planAbsentPaths,
  planCommittedAbsentPaths,
  isMakefile,
  planConfigLoads,
  planNamedPaths,
  planPinnedPaths,
  isPathProgram,
} from './pins.js';
import { PINNED_SECTIONS, readRunnerKeys, readScripts, readSection } from './package-pins.js';
import { planMakefiles, planScriptNames, planSetupScripts } from './check-steps.js';
import { matchGlobs } from './glob.js';
import { RUNNER_CONFIG_GLOBS } from './runner-config.js';

/**
 * The pins of `prd` at `commit`, with the bytes of every pinned file and of the package.json and config files whose
 * scripts and sections are pinned. Throws ObjectMismatch (git/objects.ts) when an object the commit names is
 * missing or does not hash to its id.
 */
export async function readPins(
  top: string,
  commit: string,
  prd: Prd,
  pathFolders: readonly string[] = [],
  pythonPath: readonly string[] = [],
): Promise<Pins> {
  const format = await readObjectFormat(top);
  const tree = await readVerifiedTree(top, format, commit);
  const files = [...tree.keys()];
  const paths = [...new Set([...planPinnedPaths(files, prd), ...planPathPrograms(tree, pathFolders)])].sort();
  const byDir = new Map<string, string[]>();
  // setup's install scripts are pinned like a check's script, their absence included: they run the agent's code too.
  const lifecycle = planSetupScripts(prd.setup);
  for (const { dir, name } of [...allChecks(prd).flatMap(planScriptNames), ...lifecycle])
    byDir.set(dir, [...new Set([...(byDir.get(dir) ?? []), name])]);
  // The root manifest's runner keys are pinned even when no check runs a script (`npx jest` reads them too).
  if (tree.has('package.json') && !byDir.has('')) byDir.set('', []);
  const manifestFiles = [...byDir.keys()].map((dir) => (dir ? `${dir}/package.json` : 'package.json'));
  const readableFile = (f: string) => tree.has(f) && tree.get(f)!.mode !== '160000';
  const wanted = [...new Set([...paths, ...manifestFiles, ...PINNED_SECTIONS.map((s) => s.file)])].filter(readableFile);
  const blobs = await readVerifiedObjects(
    top,
    format,
    'blob',
    wanted.map((f) => tree.get(f)!.oid),
  );
  const bytesOf = (file: string): Buffer | null => blobs.get(tree.get(file)?.oid ?? '') ?? null;
  const read = (file: string): string | null => (readableFile(file) ? (bytesOf(file)?.toString('utf8') ?? null) : null);

  const manifests: Pins['manifests'] = [];
  const named: string[] = [];
  for (const [dir, names] of byDir) {
    const file = dir ? `${dir}/package.json` : 'package.json';
    if (paths.includes(file) || !tree.has(file)) continue;
    const text = read(file);
    const defined = readScripts(text, names);
    // A script the plan commit does not define may be the story's to add; only npm's pre/post hooks around a
    // defined script, and setup's install scripts, are pinned as absent, since they could rewrite the tests right
    // before they run.
    const pinAbsent = (name: string) =>
      isHookOf(name, defined) || lifecycle.some((l) => l.dir === dir && l.name === name);
    const scripts = Object.fromEntries(Object.entries(defined).filter(([name, v]) => v !== null || pinAbsent(name)));
    manifests.push({ file, scripts, keys: readRunnerKeys(text) });
    // The files a pinned script names are pinned like those a check names (`"test": "node test.js"` pins test.js).
    // So is the makefile a pinned script runs make with (`"test": "make check"`), whole, as for a check.
    for (const value of Object.values(scripts))
      if (value) named.push(...planNamedPathsIn(dir, value, files), ...planMakefiles(value, files, dir));
  }
  const sections: Pins['sections'] = [];
  for (const { file, header } of PINNED_SECTIONS) {
    if (paths.includes(file)) continue;
    sections.push({ file, header, text: readSection(read(file), header) });
  }
  // What pinned configuration has its runner load (jest's setup files, a makefile's includes, pytest's -p plugins)
  // is pinned with it; an optional include the plan commit lacks is pinned absent in what commits add.
  const loadedAbsent: string[] = [];
  const configs = [
    ...paths.filter((p) => isLoadingConfig(p)).map((p) => ({ file: p, text: read(p) })),
    ...manifests.map((m) => ({ file: m.file, text: JSON.stringify(m.keys) })),
    ...sections.map((s) => ({ file: s.file, text: s.text })),
  ];
  for (const { file, text } of configs) {
    if (!text) continue;
    const loads = planConfigLoads(file, text, files);
    named.push(...loads.pinned);
    loadedAbsent.push(...loads.absent);
  }
  const allPaths = [...new Set([...paths, ...named])].sort();
  // The files only a script names were not in the first read: one more batch, hashed the same way.
  const more = allPaths.filter((f) => readableFile(f) && !blobs.has(tree.get(f)!.oid));
  if (more.length)
    for (const [oid, bytes] of await readVerifiedObjects(
      top,
      format,
      'blob',
      more.map((f) => tree.get(f)!.oid),
    ))
      blobs.set(oid, bytes);
  const held = new Map<string, Buffer>();
  for (const p of allPaths) {
    const bytes = readableFile(p) ? bytesOf(p) : null;
    if (bytes) held.set(p, bytes);
  }
  const absent = prd.protectDefaults !== false;
  // The pinned scripts the checks run, in their package's folder: what they start is read like a check's command.
  const scriptSteps = manifests.flatMap((m) =>
    Object.values(m.scripts).flatMap((command) =>
      command ? [{ dir: path.posix.dirname(m.file).replace(/^\.$/, ''), command }] : [],
    ),
  );
  return {
    commit,
    paths: allPaths,
    manifests,
    sections,
    absent,
    absentPaths: absent
      ? planAbsentPaths(files, prd, (f) => held.get(f)?.toString('utf8') ?? null, scriptSteps, pythonPath)
      : [],
    // An optional include a commit adds is removed; one setup generates (./configure's config.mk) is not.
    committedAbsent: absent
      ? [...new Set([...planCommittedAbsentPaths(files, prd, scriptSteps, pythonPath), ...loadedAbsent])].sort()
      : [],
    ...(pathFolders.length ? { pathFolders: [...pathFolders] } : {}),
    format,
    tree,
    held,
  };
}

/** The programs the plan commit has directly in the repository's PATH folders (isPathProgram). */
function planPathPrograms(tree: Pins['tree'], folders: readonly string[]): string[] {
  if (!folders.length) return [];
  return [...tree].filter(([file, { mode }]) => isPathProgram(file, mode, folders)).map(([file]) => file);
}

/** The committed files a command run in folder `dir` names (planNamedPaths, relative to that folder). */
function planNamedPathsIn(dir: string, command: string, files: readonly string[]): string[] {
  if (!dir) return planNamedPaths(command, files);
  const inside = files.filter((f) => f.startsWith(`${dir}/`)).map((f) => f.slice(dir.length + 1));
  return planNamedPaths(command, inside).map((f) => `${dir}/${f}`);
}

function isHookOf(name: string, defined: Record<string, string | null>): boolean {
  const m = /^(pre|post)(.+)$/.exec(name);
  return m !== null && typeof defined[m[2]] === 'string';
}

/** A pinned file whose text can name files its runner loads: configuration of the runner table, or a makefile. */
function isLoadingConfig(file: string): boolean {
  return matchGlobs([file], RUNNER_CONFIG_GLOBS).length > 0 || isMakefile(file);
}
