// The start-of-run engine check (SPEC §6): ralph/ralph.mjs and ralph.sh must be the files the manifest says ralphkit
// installed, or the engine `ralphkit run` ships. Apart from the guard that holds them during the loop
// (runner-guard.ts): this runs once, before the loop holds anything, and refuses the start.
import path from 'node:path';
import { hashContent } from '../../util/hash.js';
import { parseManifestCore } from '../../util/manifest-files.js';
import { readBytesOrNull } from '../../util/read.js';
import { LoopExit, LOOP_EXIT } from '../errors.js';
import { ralphkitCommand } from '../../util/invocation.js';

/**
 * The start-of-run check: ralph/ralph.mjs and ralph.sh must be the files the manifest says ralphkit installed.
 * A modified engine is the agent's code running as the verifier (exit 2 unless the user says otherwise).
 */
export function refuseModifiedEngine(
  repoRoot: string,
  allow: boolean,
  warn: (message: string) => void,
  packaged?: string,
): void {
  const problems = readEngineProblems(repoRoot, packaged);
  if (!problems.length) return;
  const what = problems.join('; ');
  if (allow) {
    warn(`running a modified engine because of --allow-modified-engine: ${what}`);
    return;
  }
  throw new LoopExit(
    LOOP_EXIT.refused,
    `the loop's own files are not what ralphkit installed: ${what}; a modified engine could pass anything`,
    `put them back with: ${ralphkitCommand('install --force')} (your version goes to ralph/.backup/), commit, and start again; or run anyway with --allow-modified-engine`,
  );
}

/**
 * Each engine file that differs from the manifest's record, in words. `packaged` (the engine `ralphkit run` ships)
 * is a record the agent cannot rewrite: the repository's engine must equal it byte for byte (line endings aside).
 */
export function readEngineProblems(repoRoot: string, packaged?: string): string[] {
  const engine = path.join(repoRoot, 'ralph', 'ralph.mjs');
  // A repository without an installed engine runs the packaged one (npx ralphkit run): nothing to compare.
  const installed = readBytesOrNull(engine);
  if (installed === null) return [];
  const shipped = packaged ? readBytesOrNull(packaged) : null;
  if (shipped && hashContent(shipped) !== hashContent(installed))
    return ['ralph/ralph.mjs differs from the engine this ralphkit ships (an install by another version, or an edit)'];
  const manifestText = readBytesOrNull(path.join(repoRoot, 'ralph', '.ralphkit.json'));
  const manifest = manifestText ? parseManifestCore(manifestText.toString('utf8')) : undefined;
  if (!manifest) return ['ralph/.ralphkit.json is missing or is not a ralphkit manifest'];
  const problems: string[] = [];
  for (const rel of ['ralph/ralph.mjs', 'ralph/ralph.sh']) {
    const bytes = readBytesOrNull(path.join(repoRoot, rel));
    const entry = manifest.files[rel];
    if (!entry) problems.push(`${rel} is not in the manifest`);
    else if (bytes === null) problems.push(`${rel} is missing`);
    else if (hashContent(bytes) !== entry.sha256) problems.push(`${rel} was modified`);
  }
  return problems;
}
