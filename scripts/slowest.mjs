#!/usr/bin/env node
// What the suite costs, file by file, from the JSON report the last vitest run wrote (npm test writes
// reports/vitest.json): the 20 slowest files, then the time and test count of each tier.
//   npm run test:slowest                    read reports/vitest.json
//   npm run test:slowest -- other.json      read another report
//   npm run test:slowest -- --top 40        more rows
//   npm run test:slowest -- --write         also record every file's seconds in test/durations.json, the order in
//                                           which vitest starts files (test/support/sequencer.ts)
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(fileURLToPath(new URL('..', import.meta.url)));

function parseArgs(argv) {
  const opts = { report: path.join(root, 'reports/vitest.json'), top: 20, write: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--write') opts.write = true;
    else if (a === '--top') opts.top = Number(argv[++i]);
    else if (a.startsWith('-')) throw new Error(`unknown option ${a}: use --top N, --write, or a report path`);
    else opts.report = path.resolve(a);
  }
  if (!Number.isInteger(opts.top) || opts.top < 1) throw new Error('--top takes a whole number, for example --top 40');
  return opts;
}

/** One row per test file: its path from the repository root, its tier (folder), seconds and test count. */
export function readReport(file) {
  let report;
  try {
    report = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(
      `cannot read ${file} (${err.code ?? err.message}): run the suite first, e.g. npx vitest run --reporter=json --outputFile=${path.relative(process.cwd(), file)}`,
    );
  }
  if (!Array.isArray(report.testResults)) throw new Error(`${file} is not a vitest JSON report (no testResults)`);
  return report.testResults.map((r) => {
    const rel = relativeName(r.name);
    return {
      file: rel,
      tier: rel.split('/')[1] ?? '?',
      seconds: Math.max(0, (r.endTime - r.startTime) / 1000),
      tests: r.assertionResults?.length ?? 0,
      failed: r.status !== 'passed',
    };
  });
}

// A report written in another clone names files by that clone's absolute path; the part from `test/` on is the name.
function relativeName(abs) {
  const parts = abs.split(path.sep);
  const at = parts.lastIndexOf('test');
  return at >= 0 ? parts.slice(at).join('/') : path.relative(root, abs);
}

function summarise(rows) {
  const tiers = new Map();
  for (const r of rows) {
    const t = tiers.get(r.tier) ?? { files: 0, tests: 0, seconds: 0 };
    t.files += 1;
    t.tests += r.tests;
    t.seconds += r.seconds;
    tiers.set(r.tier, t);
  }
  return [...tiers].sort((a, b) => b[1].seconds - a[1].seconds);
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  const rows = readReport(opts.report).sort((a, b) => b.seconds - a.seconds);
  const total = rows.reduce((s, r) => s + r.seconds, 0);
  console.log(
    `The ${Math.min(opts.top, rows.length)} slowest of ${rows.length} test files (seconds in their worker; ${total.toFixed(0)} s in all):`,
  );
  for (const r of rows.slice(0, opts.top)) {
    console.log(
      `${r.seconds.toFixed(1).padStart(8)} s ${String(r.tests).padStart(4)} tests  ${r.file}${r.failed ? '  (failed)' : ''}`,
    );
  }
  console.log('\nBy tier (folder):');
  for (const [tier, t] of summarise(rows)) {
    const share = total ? ((100 * t.seconds) / total).toFixed(1) : '0';
    console.log(
      `${t.seconds.toFixed(0).padStart(8)} s ${share.padStart(5)} % ${String(t.files).padStart(4)} files ${String(t.tests).padStart(5)} tests  ${tier}`,
    );
  }
  if (opts.write) {
    const table = Object.fromEntries(
      rows
        .slice()
        .sort((a, b) => a.file.localeCompare(b.file))
        .map((r) => [r.file, Math.round(r.seconds * 10) / 10]),
    );
    writeFileSync(path.join(root, 'test/durations.json'), `${JSON.stringify(table, null, 2)}\n`);
    console.log(`\nWrote test/durations.json (${rows.length} files).`);
  }
}

try {
  main();
} catch (err) {
  console.error(`test:slowest: ${err.message}`);
  process.exitCode = 1;
}
