// What the installed files tell an agent or a user to run must work from the repository alone: no fixed
// `npx ralphkit ...` (a 404 from a clone, and whoever publishes that name later would run in the agent's loop).
// The engine in ralph/ validates and lists loops itself; ralphkit is named only as the user started it.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (rel: string) => readFileSync(path.join(ROOT, rel), 'utf8');

describe('shipped text names no fixed npx ralphkit', () => {
  const files = [
    ...readdirSync(path.join(ROOT, 'skills')).map((f) => `skills/${f}`),
    'templates/ralph/prd.json',
    'templates/ralph/prompt.md',
    'templates/ralph/review.md',
  ];

  it.each(files)('%s', (rel) => {
    expect(read(rel)).not.toMatch(/npx ralphkit/);
  });

  it('ralph.sh: its header, and the modified-engine hint names ralphkit as the engine does (on PATH, else npx)', () => {
    const sh = read('templates/ralph/ralph.sh');
    expect(
      sh
        .split('\n')
        .filter((l) => l.startsWith('#'))
        .join('\n'),
    ).not.toMatch(/npx ralphkit/);
    expect(sh).not.toMatch(/hint: put it back with: npx ralphkit/);
  });

  it('the ralph skill tells the agent to validate with the installed engine', () => {
    expect(read('skills/ralph.md')).toContain('`./ralph/ralph.sh validate`');
  });

  it("the runner's --help, from ./ralph/ralph.sh, names the engine's own validate, status, cancel and cleanup", async () => {
    // This process as the installed engine started by its launcher (util/invocation.ts reads both once).
    const dir = mkdtempSync(path.join(tmpdir(), 'ralphkit-engine-'));
    const script = path.join(dir, 'ralph.mjs');
    writeFileSync(script, '');
    const saved = [process.argv[1], process.env.RALPHKIT_LAUNCHER] as const;
    process.argv[1] = script;
    process.env.RALPHKIT_LAUNCHER = 'ralph.sh';
    let help: string;
    try {
      help = (await import('../../src/engine/cli/help.js')).renderRunHelp();
    } finally {
      process.argv[1] = saved[0]!;
      if (saved[1] === undefined) delete process.env.RALPHKIT_LAUNCHER;
      else process.env.RALPHKIT_LAUNCHER = saved[1];
      rmSync(dir, { recursive: true, force: true });
    }
    expect(help).not.toMatch(/npx ralphkit (status|cancel|cleanup|run|validate)/);
    for (const sub of ['validate', 'status', 'cancel <id>', 'cleanup'])
      expect(help).toContain(`  ./ralph/ralph.sh ${sub}  `);
    expect(help).toContain('./ralph/ralph.sh status lists the loops');
  });
});
