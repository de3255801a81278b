// docs/options.md is generated (src/options-doc.ts, src/engine/cli/options-doc.ts); this fails when the committed page
// is not what the commands, the runner's help, DEFAULT_OPTIONS and LOOP_EXIT now produce, and when help.ts and args.ts
// disagree on the options.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkAgreement, parseOptionSections } from '../../src/engine/cli/options-doc.js';
import { RUN_FLAGS } from '../../src/engine/cli/args.js';
import { LOOP_EXIT } from '../../src/engine/errors.js';

// src/cli.ts runs the CLI when loaded, unless told not to.
process.env.RALPHKIT_NO_AUTORUN = '1';
const { renderOptionsDoc } = await import('../../src/options-doc.js');
delete process.env.RALPHKIT_NO_AUTORUN;
const doc = renderOptionsDoc();
const loop = doc.slice(doc.indexOf('\n## The loop: '));

describe('docs/options.md', () => {
  it('is what `npm run docs:options` writes from the sources', () => {
    const committed = readFileSync(path.join(import.meta.dirname, '../../docs/options.md'), 'utf8');
    expect(committed === doc, 'docs/options.md is out of date: run `npm run docs:options` and commit it').toBe(true);
  });

  it('has a row for every option the parser accepts (an old name inside the row of its new one)', () => {
    for (const flag of RUN_FLAGS()) expect(loop).toMatch(new RegExp(`--${flag}(?![\\w-])`));
    const rows = [...loop.matchAll(/^\| `(--[\w-]+)`/gm)].map((m) => m[1].slice(2));
    expect(RUN_FLAGS().filter((f) => !rows.includes(f))).toEqual(['verify-in-worktree', 'no-sandbox', 'help']);
  });

  it('takes each default from DEFAULT_OPTIONS, written as the help writes it', () => {
    const row = (flag: string) =>
      loop
        .split('\n')
        .find((l) => l.startsWith(`| \`--${flag}\` |`))!
        .split(' | ');
    expect(row('iteration-timeout')[2]).toBe('`60m`');
    expect(row('pause')[2]).toBe('`2s`');
    expect(row('deliver')[2]).toBe('`commit`');
    expect(row('max-cost')[2]).toBe('none');
    expect(row('no-network')[2]).toBe('off');
    // On by default where bubblewrap works; the row holds its off switch too.
    expect(loop).toContain('| `--sandbox`, `--no-sandbox` |  | on where it works |');
    // Where the help states a default in words, the column agrees.
    const stated = loop.split('\n').filter((l) => l.startsWith('| `--') && /\(default[ )]/.test(l));
    expect(stated.length).toBeGreaterThan(8);
    for (const line of stated) {
      const said = [...line.matchAll(/\(default ([\w./]+)[;)]|(\w+) \(default\)/g)].map((m) => `\`${m[1] ?? m[2]}\``);
      expect(said, line).toContain(line.split(' | ')[2]);
    }
  });

  it('has a section for each command of ralphkit, with its options and their commander defaults', () => {
    const commands = [...doc.matchAll(/^### `(ralphkit [\w ]+)`$/gm)].map((m) => m[1]);
    expect(commands).toEqual([
      'ralphkit install',
      'ralphkit skill add',
      'ralphkit validate',
      'ralphkit run',
      'ralphkit status',
      'ralphkit cancel',
      'ralphkit cleanup',
      'ralphkit view',
    ]);
    const view = doc.slice(doc.indexOf('### `ralphkit view`'), doc.indexOf('\n## The loop: '));
    expect(view).toContain('| `--port` | `<port>` | `8089` |');
    expect(view).toContain('| `--open` |  | off |');
  });

  it("README's table of commands names every command ralphkit has, in the order of its help", () => {
    const readme = readFileSync(path.join(import.meta.dirname, '../../README.md'), 'utf8');
    const listed = [...readme.matchAll(/^\| `(ralphkit [a-z]+(?: add)?)[ `]/gm)].map((m) => m[1]);
    const commands = [...doc.matchAll(/^### `(ralphkit [\w ]+)`$/gm)].map((m) => m[1]);
    expect(listed).toEqual(commands);
  });

  it('lists the exit codes of errors.ts LOOP_EXIT, each by its name', () => {
    const codes = [...doc.matchAll(/^\| (\d+) \| `(\w+)` \|/gm)].map((m) => [m[2], Number(m[1])]);
    expect(Object.fromEntries(codes)).toEqual(LOOP_EXIT);
  });

  it('refuses help text that names an option the parser does not have, or leaves one out', () => {
    const all = RUN_FLAGS()
      .map((f) => `  --${f}`.padEnd(30) + 'what it does')
      .join('\n');
    expect(() => checkAgreement(parseOptionSections(`Agent:\n${all}\n`))).not.toThrow();
    const typo = `Agent:\n${all}\n  --agnet <name>              a typo\n`;
    expect(() => checkAgreement(parseOptionSections(typo))).toThrow(
      'help.ts lists options args.ts does not accept: --agnet',
    );
    const short = `Agent:\n${all
      .split('\n')
      .filter((l) => !l.includes('--webhook'))
      .join('\n')}\n`;
    expect(() => checkAgreement(parseOptionSections(short))).toThrow(
      'args.ts accepts options help.ts does not describe: --webhook',
    );
  });
});
