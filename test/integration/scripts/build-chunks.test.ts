// dist/cli.js loads each command's code from chunks beside it (dist/cli-<name>-<hash>.js), and dist/install.js (the
// entry of `install` alone) its own. dist/ holds exactly the chunks its entries can reach, and publishing a build
// removes the chunks of older ones.
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { publish } from '../../../scripts/dist-publish.mjs';
import { ROOT, testdir, writeFiles } from '../../support/repo.js';

/** Every chunk reachable from <dir>/cli.js and <dir>/install.js through static imports and import() calls. */
function reachableChunks(dir: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    const text = readFileSync(path.join(dir, file), 'utf8');
    for (const m of text.matchAll(/(?:from |import |import\()"\.\/(cli-[^"]+\.js)"/g)) {
      if (seen.has(m[1])) continue;
      seen.add(m[1]);
      visit(m[1]);
    }
  };
  visit('cli.js');
  visit('install.js');
  return seen;
}

const chunksIn = (dir: string) => readdirSync(dir).filter((name) => name.startsWith('cli-') && name.endsWith('.js'));

describe('the built CLI (run `npm run build` first)', () => {
  it('dist/ holds exactly the chunks cli.js and install.js load', () => {
    const dist = path.join(ROOT, 'dist');
    const reachable = reachableChunks(dist);
    expect(reachable.size).toBeGreaterThan(0);
    expect(new Set(chunksIn(dist))).toEqual(reachable);
  });
});

describe('publish (scripts/dist-publish.mjs)', () => {
  it('moves a build in, replaces the page, and removes the chunks no new entry loads', async () => {
    const dir = testdir('ralphkit-publish-');
    const dist = path.join(dir, 'dist');
    const build = path.join(dist, '.build-1');
    writeFiles(dist, {
      'cli.js': 'import "./cli-chunk-OLD00000.js";\n',
      'install.js': 'import "./cli-chunk-OLD00000.js";\n',
      'cli-chunk-OLD00000.js': 'throw new Error("a chunk of an older build was loaded");\n',
      'cli-shared-SAME0000.js': 'export const shared = 1;\n',
      'ralph.mjs': '// old engine\n',
      'page/index.html': 'old page\n',
      'page/old-only.css': 'gone after publish\n',
    });
    writeFiles(build, {
      'cli.js': 'import "./cli-chunk-NEW00000.js";\nimport "./cli-shared-SAME0000.js";\n',
      'install.js': 'import "./cli-shared-SAME0000.js";\n',
      'cli-chunk-NEW00000.js': 'export const fresh = 1;\n',
      'cli-shared-SAME0000.js': 'export const shared = 1;\n',
      'ralph.mjs': '// new engine\n',
      'page/index.html': 'new page\n',
    });
    await publish(build, dist, ['cli-chunk-NEW00000.js', 'cli-shared-SAME0000.js']);
    expect(chunksIn(dist).sort()).toEqual(['cli-chunk-NEW00000.js', 'cli-shared-SAME0000.js']);
    expect(new Set(chunksIn(dist))).toEqual(reachableChunks(dist));
    expect(readFileSync(path.join(dist, 'ralph.mjs'), 'utf8')).toBe('// new engine\n');
    expect(readdirSync(path.join(dist, 'page'))).toEqual(['index.html']);
    expect(readFileSync(path.join(dist, 'page/index.html'), 'utf8')).toBe('new page\n');
    expect(readdirSync(dist).filter((name) => name.startsWith('page.old'))).toEqual([]);
    expect(readdirSync(build)).toEqual([]);
  });

  it('publishes into an empty dist/ (no page before)', async () => {
    const dir = testdir('ralphkit-publish-');
    const dist = path.join(dir, 'dist');
    const build = path.join(dist, '.build-2');
    mkdirSync(dist, { recursive: true });
    writeFiles(build, {
      'cli.js': 'import "./cli-a-AAAAAAAA.js";\n',
      'install.js': '\n',
      'cli-a-AAAAAAAA.js': '\n',
      'ralph.mjs': '\n',
      'page/index.html': 'page\n',
    });
    await publish(build, dist, ['cli-a-AAAAAAAA.js']);
    expect(existsSync(path.join(dist, 'page/index.html'))).toBe(true);
    expect(chunksIn(dist)).toEqual(['cli-a-AAAAAAAA.js']);
  });
});
