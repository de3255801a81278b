#!/usr/bin/env node
// Mutation testing, one StrykerJS run per core module with only the tests that exercise it.
//   npm run mutate                      every module, one score each
//   npm run mutate -- core/duration     only the modules whose name contains the word
//   npm run mutate -- --pure --floor    the pure modules; exit 1 if one scores under its floor
//   npm run mutate -- --ci --floor      the modules npm test re-checks (ci: true in stryker/modules.mjs)
//   npm run mutate -- --survivors       also list each surviving mutant
// Reports land in reports/mutation/<module>.json; Stryker's sandbox in .stryker-tmp/ (both gitignored).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Stryker } from '@stryker-mutator/core';
import { MODULES } from '../stryker/modules.mjs';

const root = path.resolve(fileURLToPath(new URL('..', import.meta.url)));
process.chdir(root);

function parseArgs(argv) {
  const opts = { names: [], pure: false, ci: false, floor: false, survivors: false, concurrency: 2 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--pure') opts.pure = true;
    else if (a === '--ci') opts.ci = true;
    else if (a === '--floor') opts.floor = true;
    else if (a === '--survivors') opts.survivors = true;
    else if (a === '--concurrency') opts.concurrency = Number(argv[++i]);
    else if (a.startsWith('-'))
      throw new Error(`unknown option ${a}: use --pure, --ci, --floor, --survivors or --concurrency N`);
    else opts.names.push(a);
  }
  return opts;
}

function strykerOptions(mod, opts) {
  const slug = mod.name.replace(/\//g, '-');
  return {
    testRunner: 'vitest',
    vitest: { configFile: 'stryker/vitest.config.mjs', related: false },
    coverageAnalysis: 'perTest',
    concurrency: opts.concurrency,
    mutate: [mod.mutate],
    // No TypeScript checker, and no tsconfig for Stryker to rewrite: the project's TypeScript (7) has no
    // JS API for Stryker to load, and vitest strips types without checking them anyway.
    checkers: [],
    tsconfigFile: 'stryker/no-tsconfig.json',
    disableTypeChecks: false,
    ignorePatterns: ['dist', 'reports', '.vitest-cache', '.stryker-tmp', 'docs'],
    tempDirName: `.stryker-tmp/${slug}`,
    reporters: ['json'],
    jsonReporter: { fileName: `reports/mutation/${slug}.json` },
    logLevel: 'error',
    fileLogLevel: 'off',
    timeoutMS: 10_000,
  };
}

function score(results) {
  const count = (...states) => results.filter((r) => states.includes(r.status)).length;
  const detected = count('Killed', 'Timeout');
  const undetected = count('Survived', 'NoCoverage');
  const total = detected + undetected;
  return { detected, undetected, total, pct: total ? (100 * detected) / total : 100 };
}

function survivorLines(results) {
  return results
    .filter((r) => r.status === 'Survived' || r.status === 'NoCoverage')
    .map(
      (r) =>
        `    ${path.relative(root, r.fileName)}:${r.location.start.line}:${r.location.start.column + 1} ${r.status} ${r.mutatorName}: ${JSON.stringify(r.replacement ?? '')}`,
    );
}

async function runModule(mod, opts) {
  process.env.RALPHKIT_MUTATE_TESTS = mod.tests.join(',');
  const started = Date.now();
  const results = await new Stryker(strykerOptions(mod, opts)).runMutationTest();
  return { mod, ...score(results), seconds: (Date.now() - started) / 1000, survivors: survivorLines(results) };
}

function row(r, floorCheck) {
  const below = floorCheck && r.pct < (r.mod.floor ?? 0);
  const floor = floorCheck && r.mod.floor !== undefined ? `  floor ${r.mod.floor}%${below ? '  BELOW FLOOR' : ''}` : '';
  return `${r.mod.name.padEnd(18)} ${r.pct.toFixed(2).padStart(6)}%  ${String(r.detected).padStart(4)}/${String(r.total).padEnd(4)} killed  ${r.seconds.toFixed(0).padStart(4)}s${floor}`;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const mods = MODULES.filter(
    (m) =>
      (!opts.pure || m.pure) &&
      (!opts.ci || m.ci) &&
      (opts.names.length === 0 || opts.names.some((n) => m.name.includes(n))),
  );
  if (mods.length === 0)
    throw new Error(`no module matches ${opts.names.join(' ')}: known are ${MODULES.map((m) => m.name).join(', ')}`);
  const rows = [];
  for (const mod of mods) {
    const r = await runModule(mod, opts);
    rows.push(r);
    console.log(row(r, opts.floor));
    if (opts.survivors) for (const line of r.survivors) console.log(line);
  }
  const total = rows.reduce((s, r) => s + r.seconds, 0);
  console.log(`${rows.length} module(s) in ${total.toFixed(0)}s`);
  const below = opts.floor ? rows.filter((r) => r.pct < (r.mod.floor ?? 0)) : [];
  for (const r of below) {
    console.error(
      `mutate: ${r.mod.name} scored ${r.pct.toFixed(2)}%, under its floor of ${r.mod.floor}%: its tests no longer notice some changes to it (a test removed or weakened, or new code no test covers).`,
    );
    console.error(`  list what survives: npm run mutate -- ${r.mod.name} --survivors --concurrency 1`);
    console.error(
      '  then add tests that kill them; an equivalent mutant goes in docs/testing.md, with the floor in stryker/modules.mjs lowered to match',
    );
  }
  if (below.length) process.exitCode = 1;
}

main().catch((err) => {
  console.error(`mutate: ${err.message}`);
  process.exitCode = 2;
});
