// node_modules/.bin at the loop's end against its start (verify/tool-bins.ts): `npx ralphkit` in the tree runs
// node_modules/.bin/ralphkit, or the package npm finds by the name ralphkit, first; so what of them was made or
// changed during the loop is set aside; other programs made or changed are named; untracked package-manager and
// Claude Code config files that start programs are set aside too.
import { chmodSync, existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readToolBins, settleToolBins } from '../../../../src/engine/verify/tool-bins.js';
import { testdir } from '../../../support/repo.js';

const untracked = () => false;

/** A tree with node_modules/<name> holding a package.json and bin/cli.js, linked from node_modules/.bin/<bin>. */
function installed(top: string, folder: string, name: string, bin: string): void {
  const dir = path.join(top, 'node_modules', folder);
  mkdirSync(path.join(dir, 'bin'), { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, bin: { [bin]: 'bin/cli.js' } }));
  writeFileSync(path.join(dir, 'bin/cli.js'), '#!/usr/bin/env node\n');
  mkdirSync(path.join(top, 'node_modules/.bin'), { recursive: true });
  symlinkSync(`../${folder}/bin/cli.js`, path.join(top, 'node_modules/.bin', bin));
}

describe('settleToolBins', () => {
  it('a ralphkit the agent left in node_modules/.bin is set aside; a program changed or added is named; unchanged ones say nothing', () => {
    const top = testdir();
    const keep = testdir('ralphkit-keep-');
    const bin = path.join(top, 'node_modules/.bin');
    mkdirSync(bin, { recursive: true });
    symlinkSync('../vitest/vitest.mjs', path.join(bin, 'vitest'));
    writeFileSync(path.join(bin, 'tsc'), '#!/bin/sh\n');
    const held = readToolBins(top);
    expect(settleToolBins(top, held, keep, untracked)).toEqual({ said: [], failed: false });
    writeFileSync(path.join(bin, 'ralphkit'), '#!/bin/sh\necho all stories pass\n');
    chmodSync(path.join(bin, 'ralphkit'), 0o755);
    writeFileSync(path.join(bin, 'tsc'), '#!/bin/sh\ncurl evil\n');
    writeFileSync(path.join(bin, 'sh'), '#!/bin/sh\n');
    const { said, failed } = settleToolBins(top, held, keep, untracked);
    expect(failed).toBe(false);
    expect(said[0]).toMatch(
      /^node_modules\/\.bin\/ralphkit was made or changed during the loop: `npx ralphkit` in this tree would run it; moved into /,
    );
    expect(said[1]).toContain('programs in node_modules/.bin were made or changed during the loop (sh, tsc)');
    expect(said).toHaveLength(2);
    expect(existsSync(path.join(bin, 'ralphkit'))).toBe(false);
    expect(readdirSync(path.join(keep, 'set-aside/node_modules/.bin'))[0]).toMatch(/^ralphkit-\d+$/);
    expect(readToolBins(top).get('node_modules/.bin/vitest')).toBe('link ../vitest/vitest.mjs -');
  });

  it('an installed ralphkit edited in place, and a package of another folder named ralphkit, are set aside; a program whose link stayed but whose file changed is named', () => {
    const top = testdir();
    const keep = testdir('ralphkit-keep-');
    installed(top, 'ralphkit', 'ralphkit', 'ralphkit');
    installed(top, 'tool', 'tool', 'tool');
    const held = readToolBins(top);
    writeFileSync(path.join(top, 'node_modules/ralphkit/bin/cli.js'), 'console.log("all stories pass")\n');
    writeFileSync(path.join(top, 'node_modules/tool/bin/cli.js'), 'require("child_process").execSync("evil")\n');
    mkdirSync(path.join(top, 'node_modules/@x/zz'), { recursive: true });
    writeFileSync(
      path.join(top, 'node_modules/@x/zz/package.json'),
      '{ "name"  :  "ralphkit", "bin": {"tool": "t.js"} }',
    );
    const { said, failed } = settleToolBins(top, held, keep, untracked);
    expect(failed).toBe(false);
    expect(said.map((m) => m.split(' ')[0]).sort()).toEqual([
      'node_modules/.bin/ralphkit',
      'node_modules/@x/zz',
      'node_modules/ralphkit',
      'programs',
    ]);
    expect(said[3]).toMatch(/^programs/);
    expect(said[3]).toContain('(tool)');
    for (const gone of ['.bin/ralphkit', 'ralphkit', '@x/zz'])
      expect(existsSync(path.join(top, 'node_modules', gone))).toBe(false);
  });

  it('node_modules/ralphkit made during the loop goes too; through a link on the way it cannot be moved: said, and failed', () => {
    const top = testdir();
    const keep = testdir('ralphkit-keep-');
    const held = readToolBins(top);
    mkdirSync(path.join(top, 'node_modules/ralphkit'), { recursive: true });
    writeFileSync(path.join(top, 'node_modules/ralphkit/package.json'), '{"bin":{"ralphkit":"x.js"}}');
    expect(settleToolBins(top, held, keep, untracked).said[0]).toContain('node_modules/ralphkit was made or changed');
    expect(existsSync(path.join(top, 'node_modules/ralphkit'))).toBe(false);
    const other = testdir();
    const elsewhere = testdir();
    mkdirSync(path.join(elsewhere, '.bin'));
    symlinkSync(elsewhere, path.join(other, 'node_modules'));
    const before = readToolBins(other);
    writeFileSync(path.join(elsewhere, '.bin/ralphkit'), '#!/bin/sh\n');
    const r = settleToolBins(other, before, keep, untracked);
    expect(r.failed).toBe(true);
    expect(r.said[0]).toContain('could not be moved aside (node_modules is a link)');
    expect(existsSync(path.join(elsewhere, '.bin/ralphkit'))).toBe(true);
  });

  it('an .npmrc or a .yarnrc.yml no commit tracks, made during the loop, is set aside; a tracked one changed stays (the diff shows it)', () => {
    const top = testdir();
    const keep = testdir('ralphkit-keep-');
    writeFileSync(path.join(top, '.yarnrc.yml'), 'nodeLinker: node-modules\n');
    const held = readToolBins(top);
    writeFileSync(path.join(top, '.npmrc'), 'node-options=--require ./evil.cjs\n');
    writeFileSync(path.join(top, '.yarnrc'), 'yarn-path "./evil.cjs"\n');
    writeFileSync(path.join(top, '.pnpmfile.cjs'), 'require("./evil.cjs");\n');
    writeFileSync(path.join(top, '.yarnrc.yml'), 'yarnPath: ./evil.cjs\n');
    mkdirSync(path.join(top, '.claude'));
    writeFileSync(path.join(top, '.claude/settings.local.json'), '{"hooks":{}}');
    const { said } = settleToolBins(top, held, keep, (rel) => rel === '.yarnrc.yml');
    expect(said.map((m) => m.split(' ')[0])).toEqual([
      '.npmrc',
      '.yarnrc',
      '.pnpmfile.cjs',
      '.claude/settings.local.json',
    ]);
    expect(said[0]).toMatch(
      /^\.npmrc was made or changed during the loop: no commit tracks it, and your npm, npx, yarn or pnpm here would read it; moved into/,
    );
    expect(said[3]).toContain(
      '.claude/settings.local.json was made or changed during the loop: no commit tracks it, and your next Claude Code session here would read it',
    );
    expect(existsSync(path.join(top, '.npmrc'))).toBe(false);
    expect(existsSync(path.join(top, '.claude/settings.local.json'))).toBe(false);
    expect(existsSync(path.join(top, '.yarnrc.yml'))).toBe(true);
  });

  it('many programs changed: eight named, the rest counted', () => {
    const top = testdir();
    mkdirSync(path.join(top, 'node_modules/.bin'), { recursive: true });
    const held = readToolBins(top);
    for (let i = 0; i < 9; i++) writeFileSync(path.join(top, `node_modules/.bin/p${i}`), `${i}\n`);
    const [said] = settleToolBins(top, held, testdir('ralphkit-keep-'), untracked).said;
    expect(said).toContain('(p0, p1, p2, p3, p4, p5, p6, p7, and 1 more)');
  });

  it('what an installed ralphkit runs, anywhere in it: its package.json alone, a file deep in dist/', () => {
    for (const change of ['package.json', 'dist/engine/ralph.mjs']) {
      const top = testdir();
      installed(top, 'ralphkit', 'ralphkit', 'ralphkit');
      mkdirSync(path.join(top, 'node_modules/ralphkit/dist/engine'), { recursive: true });
      writeFileSync(path.join(top, 'node_modules/ralphkit/dist/engine/ralph.mjs'), 'export {};\n');
      const held = readToolBins(top);
      writeFileSync(path.join(top, 'node_modules/ralphkit', change), '{"name":"ralphkit","bin":{"ralphkit":"x.js"}}');
      const { said } = settleToolBins(top, held, testdir('ralphkit-keep-'), untracked);
      expect(
        said.map((m) => m.split(' ')[0]),
        change,
      ).toEqual(['node_modules/ralphkit']);
    }
  });
});
