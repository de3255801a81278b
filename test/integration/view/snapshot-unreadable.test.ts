// The dashboard's /api/loops reads the same list as `ralphkit status`: a loop whose state.json is corrupt is there
// as `unreadable` (not dropped, not a crash), and an unreadable ralph/.runs/ still shows as no loops.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitdir } from '../../support/repo.js';
import { readLoopsSnapshot, resolveViewPaths } from '../../../src/view/snapshot.js';
import { readLoopSummaries, readLoopSummariesOrRefuse } from '../../../src/engine/store/summaries.js';

describe("a corrupt state.json in the dashboard's list of loops", () => {
  it.each([
    ['{corrupt\n', /not valid JSON/],
    ['{"status": "running"}\n', /not a loop state \(no "id"\)/],
    ['null\n', /not a loop state/],
  ])("%j: listed as unreadable under its folder's name", (text, why) => {
    const dir = gitdir();
    mkdirSync(path.join(dir, 'ralph/.runs/broken'), { recursive: true });
    writeFileSync(path.join(dir, 'ralph/.runs/broken/state.json'), text);
    const { loops } = readLoopsSnapshot(resolveViewPaths(dir));
    expect(loops).toEqual([
      expect.objectContaining({
        id: 'broken',
        status: 'unreadable',
        alive: false,
        exitCode: null,
        message: expect.stringMatching(why),
      }),
    ]);
    expect(loops[0].message).toContain('ralph/.runs/broken/state.json');
  });

  it('a ralph/.runs that is a file: none for the dashboard, a refusal for status', () => {
    const dir = gitdir();
    mkdirSync(path.join(dir, 'ralph'), { recursive: true });
    writeFileSync(path.join(dir, 'ralph/.runs'), 'not a folder\n');
    expect(readLoopSummaries(dir)).toEqual([]);
    expect(() => readLoopSummariesOrRefuse(dir)).toThrow(/could not read ralph\/\.runs\//);
  });
});
