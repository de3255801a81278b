// The dependency rules of docs/architecture.md, checked on every import in src/: static `import … from`,
// `export … from`, side-effect `import '…'` and `import('…')` with a literal. A broken rule names the file and
// the import. Exceptions are named below with their reason; an exception nothing needs any more fails too.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SRC = path.join(ROOT, 'src');

interface Import {
  /** The importing file, relative to the repository (`src/engine/run/run.ts`). */
  from: string;
  /** A relative import resolved to its file (`src/engine/git/git.ts`), else the bare specifier (`node:fs`, `kleur`). */
  to: string;
  /** `import type`, `export type`, or every name in braces marked `type`: erased from the build. */
  typeOnly: boolean;
  line: number;
}

function listTs(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(folder, e.name);
    if (e.isDirectory()) return listTs(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

const STATIC = /^[ \t]*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"]([^'"]+)['"]/gm;
const BARE = /^[ \t]*import\s*['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g;

function resolveSpecifier(file: string, spec: string): string {
  if (!spec.startsWith('.')) return spec;
  const abs = path.resolve(path.dirname(file), spec).replace(/\.js$/, '.ts');
  return path
    .relative(ROOT, /\.(ts|json)$/.test(abs) ? abs : `${abs}.ts`)
    .split(path.sep)
    .join('/');
}

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split('\n').length;
}

function allTypes(clause: string): boolean {
  const braces = /^\{([^}]*)\}$/.exec(clause.trim());
  if (!braces) return false;
  const names = braces[1]
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  return names.length > 0 && names.every((n) => n.startsWith('type '));
}

function parseImports(file: string, text: string): Import[] {
  const from = path.relative(ROOT, file).split(path.sep).join('/');
  const found: Import[] = [];
  for (const m of text.matchAll(STATIC)) {
    found.push({
      from,
      to: resolveSpecifier(file, m[4]),
      typeOnly: Boolean(m[2]) || allTypes(m[3]),
      line: lineOf(text, m.index),
    });
  }
  for (const m of text.matchAll(BARE))
    found.push({ from, to: resolveSpecifier(file, m[1]), typeOnly: false, line: lineOf(text, m.index) });
  for (const m of text.matchAll(DYNAMIC))
    found.push({ from, to: resolveSpecifier(file, m[1]), typeOnly: false, line: lineOf(text, m.index) });
  return found;
}

const FILES = listTs(SRC);
const TEXTS = new Map(FILES.map((f) => [f, readFileSync(f, 'utf8')]));
const IMPORTS = FILES.flatMap((f) => parseImports(f, TEXTS.get(f)!));

const under = (folder: string) => (p: string) => p.startsWith(`src/${folder}/`) || p === `src/${folder}.ts`;
const engine =
  (...folders: string[]) =>
  (p: string) =>
    folders.some((f) => p.startsWith(`src/engine/${f}/`) || p === `src/engine/${f}.ts`);
const EDGES = engine('agents', 'git', 'verify', 'budget', 'deliver', 'store');

/** An import a rule forbids that stays for now, and why (docs/architecture.md, "Dependency rules", names each). */
interface Exception {
  from: string;
  to: string;
  reason: string;
}

interface Rule {
  name: string;
  /** The imports the rule forbids. */
  breaks: (i: Import) => boolean;
  exceptions?: Exception[];
}

const LEAVES = [
  'src/engine/types.ts',
  'src/engine/loop-options.ts',
  'src/engine/verify/types.ts',
  'src/engine/budget/types.ts',
  'src/engine/store/state-types.ts',
  'src/engine/run/parallel/types.ts',
  'src/engine/errors.ts',
];

const RULES: Rule[] = [
  {
    name: 'types.ts, the type modules beside it and errors.ts are leaves: they import other engine modules for types only',
    breaks: (i) => LEAVES.includes(i.from) && i.to.startsWith('src/engine/') && !i.typeOnly,
  },
  {
    name: 'core/ has no fs and no child_process',
    breaks: (i) => engine('core')(i.from) && /^(node:)?(fs|fs\/promises|child_process)$/.test(i.to),
  },
  {
    name: 'the edges (agents/, git/, verify/, budget/, deliver/, store/) never import run/, cli/ or hook/',
    breaks: (i) => EDGES(i.from) && engine('run', 'cli', 'hook')(i.to),
  },
  {
    name: 'run/ is imported only by run/, cli/ and entry.ts',
    breaks: (i) => engine('run')(i.to) && !engine('run', 'cli', 'entry')(i.from),
  },
  {
    name: 'run/ never imports cli/ (cli/ wires the command line into run/, not back)',
    breaks: (i) => engine('run')(i.from) && engine('cli')(i.to),
  },
  {
    name: 'cli/ is imported only by cli/, entry.ts, hook/ (the same option parser), `ralphkit run` and the options doc',
    breaks: (i) =>
      engine('cli')(i.to) &&
      !engine('cli', 'entry', 'hook')(i.from) &&
      i.from !== 'src/commands/run-action.ts' &&
      i.from !== 'src/options-doc.ts',
  },
  {
    name: 'the engine (bundled alone into ralph.mjs) imports only the engine, src/prd/ and src/util/',
    breaks: (i) =>
      under('engine')(i.from) &&
      i.to.startsWith('src/') &&
      !under('engine')(i.to) &&
      !under('prd')(i.to) &&
      !under('util')(i.to),
  },
  {
    name: 'src/util/ imports only src/util/ (small helpers under every core)',
    breaks: (i) => under('util')(i.from) && i.to.startsWith('src/') && !under('util')(i.to),
  },
  {
    name: 'skills/ imports install/ for types only (install/ uses the skill tables, not the other way)',
    breaks: (i) => under('skills')(i.from) && under('install')(i.to) && !i.typeOnly,
  },
];

function render(i: Import): string {
  return `${i.from}:${i.line} imports ${i.to}`;
}

const isException = (rule: Rule, i: Import) => (rule.exceptions ?? []).some((e) => e.from === i.from && e.to === i.to);

describe('the dependency rules of docs/architecture.md', () => {
  it('reads the imports of every file in src/', () => {
    expect(FILES.length).toBeGreaterThan(100);
    expect(IMPORTS.some((i) => i.from === 'src/engine/run/run.ts' && i.to === 'src/engine/core/loop.ts')).toBe(true);
    // a dynamic import with a literal counts (commands load their actions this way)
    expect(IMPORTS.some((i) => i.from.startsWith('src/commands/') && i.to.endsWith('-action.ts'))).toBe(true);
  });

  it.each(RULES.map((r) => [r.name, r] as const))('%s', (_name, rule) => {
    const broken = IMPORTS.filter((i) => rule.breaks(i) && !isException(rule, i)).map(render);
    expect(broken, `rule broken (move the code, or name an exception with its reason):\n${broken.join('\n')}`).toEqual(
      [],
    );
    const stale = (rule.exceptions ?? []).filter(
      (e) => !IMPORTS.some((i) => i.from === e.from && i.to === e.to && rule.breaks(i)),
    );
    expect(
      stale.map((e) => `${e.from} -> ${e.to}`),
      'exceptions no import needs any more: take them out',
    ).toEqual([]);
  });

  it('docs/architecture.md names every file in src/ (one line each), and no file that is gone', () => {
    const doc = readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
    const files = FILES.map((f) => path.relative(ROOT, f).split(path.sep).join('/'));
    // A line may name a sibling by its base name after the first's full path (`src/commands/run.ts`, `run-action.ts`).
    const lines = doc.split('\n');
    const hasLine = (f: string) =>
      lines.some(
        (l) =>
          l.includes(`\`${f}\``) ||
          (l.includes(`\`${path.posix.dirname(f)}/`) && l.includes(`\`${path.posix.basename(f)}\``)),
      );
    expect(
      files.filter((f) => !hasLine(f)),
      'files in src/ without their line in docs/architecture.md',
    ).toEqual([]);
    const named = [...doc.matchAll(/`(src\/[\w./-]+\.ts)`/g)].map((m) => m[1]);
    expect(
      named.filter((f) => !files.includes(f)),
      'files docs/architecture.md names that are not in src/',
    ).toEqual([]);
  });

  it('the engine bundle reaches Node built-ins only (no npm package)', () => {
    const seen = new Set<string>();
    const packages: string[] = [];
    const queue = ['src/engine/main.ts'];
    while (queue.length) {
      const file = queue.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      for (const i of IMPORTS.filter((x) => x.from === file && !x.typeOnly)) {
        if (i.to.startsWith('src/')) queue.push(i.to);
        else if (i.to.endsWith('.json'))
          continue; // data, bundled as it is
        else if (!i.to.startsWith('node:')) packages.push(render(i));
      }
    }
    expect(seen.size).toBeGreaterThan(100);
    expect(packages).toEqual([]);
  });

  it('exit codes are named: no `new LoopExit(<number>` in src/ (LOOP_EXIT.refused, EXIT_FAILURE, ...)', () => {
    const bare = FILES.flatMap((f) => {
      const text = TEXTS.get(f)!;
      return [...text.matchAll(/new LoopExit\(\s*\d/g)].map(
        (m) => `${path.relative(ROOT, f)}:${lineOf(text, m.index)}`,
      );
    });
    expect(bare, `exit codes written as numbers:\n${bare.join('\n')}`).toEqual([]);
  });

  it('one error base class: an exit code is declared only by RalphkitError (src/util/errors.ts), and no error is converted by hand', () => {
    const found = FILES.flatMap((f) => {
      const rel = path.relative(ROOT, f).split(path.sep).join('/');
      const text = TEXTS.get(f)!;
      const own = rel === 'src/util/errors.ts' ? [] : [...text.matchAll(/readonly (exitCode|code): number/g)];
      const converted = [...text.matchAll(/new RalphkitError\(\s*err\.message/g)];
      return [...own, ...converted].map((m) => `${rel}:${lineOf(text, m.index)}: ${m[0]}`);
    });
    expect(found, `extend RalphkitError (src/util/errors.ts) instead:\n${found.join('\n')}`).toEqual([]);
  });

  it('the loops read the time through the injected clock only: no Date.now() or new Date() in core/ or the --parallel coordinator', () => {
    // The coordinator is run/parallel/run.ts and the modules it is split into: launch.ts, outcomes.ts, end.ts.
    const loops = FILES.filter((f) =>
      /src\/engine\/core\/|src\/engine\/run\/parallel\/(run|launch|outcomes|end)\.ts$/.test(
        f.split(path.sep).join('/'),
      ),
    );
    expect(loops.length).toBeGreaterThan(5);
    const wall = loops.flatMap((f) => {
      const text = TEXTS.get(f)!;
      return [...text.matchAll(/Date\.now\(\)|new Date\(\)/g)].map(
        (m) => `${path.relative(ROOT, f)}:${lineOf(text, m.index)}`,
      );
    });
    expect(wall, `the wall clock read where the injected clock belongs:\n${wall.join('\n')}`).toEqual([]);
  });
});
