// --deliver pr-merge never merges a branch whose commits changed what the loop pinned (SPEC §10): the checks ran with
// the plan commit's versions, so the branch's own versions were never what passed. Compares the pinned files, the
// pinned script definitions and runner keys of each package.json, the pinned config sections, and (unless the plan
// says "protectDefaults": false) the files whose mere presence changes how checks run, between the plan commit and
// a later commit. A story's `mayChange` does not exempt a file here: a change to a test is for a person to review.
import type { Pins } from './types.js';
import { gitOk } from '../git/git.js';
import { readFileAt } from '../git/read.js';
import { absentInCommits, matchAbsent } from './pins.js';
import { readRunnerKeys, readScripts, readSection } from './package-pins.js';

/** What `commit` changed of the pins since `pins.commit`, as "M test/a.test.ts", "package.json scripts.test", ... */
export async function readPinDrift(top: string, pins: Pins, commit: string): Promise<string[]> {
  if (pins.commit === commit) return [];
  const fields = (
    await gitOk(top, [
      'diff',
      '--name-status',
      '--no-renames',
      '--no-ext-diff',
      '--no-textconv',
      '-z',
      pins.commit,
      commit,
      '--',
    ])
  ).split('\0');
  const pinned = new Set(pins.paths);
  const drift: string[] = [];
  const added: string[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [status, file] = [fields[i], fields[i + 1]];
    if (pinned.has(file)) drift.push(`${status} ${file}`);
    else if (status === 'A') added.push(file);
  }
  if (pins.absent) drift.push(...matchAbsent(added, absentInCommits(pins)).map((f) => `A ${f}`));
  for (const m of pins.manifests) {
    const text = await readFileAt(top, commit, m.file);
    const scripts = readScripts(text, Object.keys(m.scripts));
    for (const [name, value] of Object.entries(m.scripts))
      if (scripts[name] !== value) drift.push(`${m.file} scripts.${name}`);
    const keys = readRunnerKeys(text);
    for (const [key, value] of Object.entries(m.keys))
      if (JSON.stringify(keys[key] ?? null) !== JSON.stringify(value)) drift.push(`${m.file} ${key}`);
  }
  for (const s of pins.sections) {
    if (readSection(await readFileAt(top, commit, s.file), s.header) !== s.text) drift.push(`${s.file} ${s.header}`);
  }
  return drift;
}
