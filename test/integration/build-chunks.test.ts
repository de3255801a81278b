// dist/cli.js loads each command's code from chunks beside it (dist/cli-<name>-<hash>.js). A build
// leaves exactly the chunks its cli.js can reach: none missing, none left over from an older build.
import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, run } from '../support/repo.js';

const DIST = path.join(ROOT, 'dist');

/** Every chunk reachable from dist/cli.js through static imports and import() calls. */
function reachableChunks(): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    const text = readFileSync(path.join(DIST, file), 'utf8');
    for (const m of text.matchAll(/(?:from |import |import\()"\.\/(cli-[^"]+\.js)"/g)) {
      if (seen.has(m[1])) continue;
      seen.add(m[1]);
      visit(m[1]);
    }
  };
  visit('cli.js');
  return seen;
}

const chunksOnDisk = () => readdirSync(DIST).filter((name) => name.startsWith('cli-') && name.endsWith('.js'));

describe('the built CLI (run `npm run build` first)', () => {
  it('dist/ holds exactly the chunks cli.js loads', () => {
    const reachable = reachableChunks();
    expect(reachable.size).toBeGreaterThan(0);
    expect(new Set(chunksOnDisk())).toEqual(reachable);
  });

  it('a build removes a chunk no cli.js of it loads, and keeps the ones it does', async () => {
    const stale = path.join(DIST, 'cli-chunk-OLDBUILD.js');
    writeFileSync(stale, 'throw new Error("a chunk of an older build was loaded");\n');
    const result = await run(process.execPath, [path.join(ROOT, 'scripts/build.mjs')], { cwd: ROOT });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(existsSync(stale)).toBe(false);
    expect(new Set(chunksOnDisk())).toEqual(reachableChunks());
  });
});
