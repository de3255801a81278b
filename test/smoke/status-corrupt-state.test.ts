// A loop whose state.json is corrupt must not vanish from `ralphkit status` (a runner may still be going): it is
// listed as `unreadable` under its folder's name, with a warning naming the file, in the table and in --json.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, gitdir, run, runCli } from '../support/repo.js';
import { writeRunningLoop } from '../support/lifecycle.js';

function repoWithCorruptLoop(): string {
  const dir = gitdir({ 'ralph/.gitignore': '.runs\n' });
  // A readable neighbour, to show the corrupt one does not hide the others either.
  writeRunningLoop(dir, { id: 'good', pid: 999_999_999 });
  mkdirSync(path.join(dir, 'ralph/.runs/broken'), { recursive: true });
  writeFileSync(path.join(dir, 'ralph/.runs/broken/state.json'), '{corrupt\n');
  // A folder without state.json (refused before it wrote one) stays out of the list.
  mkdirSync(path.join(dir, 'ralph/.runs/empty'), { recursive: true });
  return dir;
}

const WARNING =
  /warning: could not read ralph\/\.runs\/broken\/state\.json \(not valid JSON: .*\); loop broken is listed as unreadable/;

describe('ralphkit status with a corrupt state.json', () => {
  it('table: the loop is listed as unreadable, the file named in a warning, exit 0', async () => {
    const dir = repoWithCorruptLoop();
    const r = await runCli(['status', '--cwd', dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(/no loops yet/);
    expect(r.stdout).toMatch(/^broken\s+unreadable\s+\?\/\?/m);
    expect(r.stdout).toMatch(/^good\s+dead\s+1\/10/m);
    expect(r.stdout).not.toMatch(/^empty/m);
    expect(r.stderr).toMatch(WARNING);
  });

  it('--json includes it with status "unreadable" and its id; the runner\'s own status says the same', async () => {
    const dir = repoWithCorruptLoop();
    const r = await runCli(['status', '--json', '--cwd', dir]);
    expect(r.code, r.stderr).toBe(0);
    const { loops } = JSON.parse(r.stdout) as { loops: Array<Record<string, unknown>> };
    expect(loops.map((l) => [l.id, l.status])).toEqual([
      ['good', 'dead'],
      ['broken', 'unreadable'],
    ]);
    expect(loops[1]).toMatchObject({ alive: false, message: expect.stringContaining('ralph/.runs/broken/state.json') });
    expect(r.stderr).toMatch(WARNING);
    const engine = await run(process.execPath, [path.join(ROOT, 'dist/ralph.mjs'), 'status'], { cwd: dir });
    expect(engine.code, engine.stderr).toBe(0);
    expect(engine.stdout).toMatch(/^broken\s+unreadable/m);
    expect(engine.stderr).toMatch(/ralph: warning: could not read ralph\/\.runs\/broken\/state\.json/);
  });
});
