// The runner starts no program by a bare name that a PATH lookup would resolve when it runs: an agent can write PATH
// folders (node_modules/.bin, which npx and npm run put first; ~/.local/bin without the sandbox), and a program found
// there after the loop started would run outside the sandbox. Every program is an absolute path: the shell
// (util/which.ts SHELL), one found on PATH at the start (git/program.ts, deliver/programs.ts, the agent and reviewer
// binaries), or one from the system's folders (verify/setup-cache.ts findSystemCp). This reads every spawn in src/
// whose program is a single-quoted literal, or a `{ file: '…', args }` plan; a program held in a variable, a
// template string or a call of `exec`/`execSync` (not used in src/) is not read.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../src');

function listTs(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(folder, e.name);
    if (e.isDirectory()) return listTs(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

// A call that starts a program, with a string literal as the program; or a plan's `{ file, args }` given as one.
const LITERAL_PROGRAM = [
  /\b(?:spawn|spawnSync|execFile|execFileSync|spawnOk|wrap)\(\s*'([^']*)'/g,
  /\bfile:\s*'([^']*)',\s*args\b/g,
];
// Windows has no sandbox; taskkill is the one way to stop a process tree there.
const ALLOWED = new Set(['src/engine/processes.ts:taskkill']);

describe('programs the runner starts', () => {
  it('are never a bare name looked up on PATH when they run', () => {
    const found: string[] = [];
    for (const file of listTs(SRC)) {
      const text = readFileSync(file, 'utf8');
      const rel = path.relative(path.dirname(SRC), file).split(path.sep).join('/');
      for (const re of LITERAL_PROGRAM)
        for (const m of text.matchAll(re)) {
          const program = m[1];
          if (program.startsWith('/') || ALLOWED.has(`${rel}:${program}`)) continue;
          found.push(`${rel}:${text.slice(0, m.index).split('\n').length}: ${m[0]}`);
        }
    }
    expect(found).toEqual([]);
  });

  it('the check finds the form it looks for', () => {
    const sample = "spawn('cp', ['-a']); const p = { file: 'sh', args: [] };";
    const hits = LITERAL_PROGRAM.flatMap((re) => [...sample.matchAll(re)].map((m) => m[1]));
    expect(hits).toEqual(['cp', 'sh']);
  });
});
