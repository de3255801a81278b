// `npm run bench`: ralphkit's speed measured side by side with the cheapest alternative, in one run.
// Each pair is run interleaved (a, b, a, b, ...) so machine noise hits both sides alike; the minimum and the median of
// each side are reported: the minimum is the run the machine disturbed least, the median the typical one.
// Runs after `npm run build`; a part whose command is not built yet is reported as skipped, never faked.
// Options: --quick (fewer repetitions), --only=install,runner,cpu,honest,output,parallel,replay,validate,dashboard,api.
import { spawn, execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, readFileSync, mkdirSync, existsSync, renameSync } from 'node:fs';
import { tmpdir, cpus, totalmem, availableParallelism, loadavg, homedir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import net from 'node:net';
import { benchParallel } from './bench-parallel.mjs';
import { benchReplay } from './bench-replay.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'bin/ralphkit.js');
const CHROMIUM = process.env.RALPHKIT_CHROMIUM || '/usr/bin/chromium';
const QUICK = process.argv.includes('--quick');
const ENV = {
  ...process.env,
  FORCE_COLOR: '0',
  NO_COLOR: '1',
  GIT_AUTHOR_NAME: 'Bench',
  GIT_AUTHOR_EMAIL: 'bench@example.com',
  GIT_COMMITTER_NAME: 'Bench',
  GIT_COMMITTER_EMAIL: 'bench@example.com',
  GIT_CONFIG_NOSYSTEM: '1',
};
const temps = [];

function tempdir(prefix) {
  const dir = mkdtempSync(path.join(tmpdir(), `ralphkit-bench-${prefix}-`));
  temps.push(dir);
  return dir;
}

function gitRepo(prefix) {
  const dir = tempdir(prefix);
  const git = (...args) => execFileSync('git', args, { cwd: dir, env: ENV, stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  git('config', 'commit.gpgsign', 'false');
  writeFileSync(path.join(dir, 'README.md'), '# bench\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'initial');
  return dir;
}

/** Runs a command to completion; resolves with its wall time in ms, its exit code and its output (both streams). */
function timedRun(cmd, args, { cwd = ROOT, input = '' } = {}) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(cmd, args, { cwd, env: ENV, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ ms: performance.now() - start, code, output }));
    child.stdin.end(input);
  });
}

/** Runs a command to completion; resolves with its wall time in ms. A surprising exit code is an error. */
async function timed(cmd, args, { cwd = ROOT, expect = [0], input = '' } = {}) {
  const { ms, code, output } = await timedRun(cmd, args, { cwd, input });
  if (expect.includes(code)) return ms;
  throw new Error(
    `${path.basename(args[0] ?? cmd)} ${args[1] ?? ''} exited ${code}: ${output.trim().split('\n').pop()}`,
  );
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The minimum and the median of one side's samples (milliseconds). */
function stats(values) {
  return { min: Math.min(...values), median: median(values) };
}

/** The same statistics divided by `k` (a whole loop's figures per story or per iteration). */
function per(s, k) {
  return { min: s.min / k, median: s.median / k };
}

/** Interleaves the measures `n` times each (after one unmeasured warm-up of each); returns stats() of each. */
async function interleaved(n, ...fns) {
  for (const fn of fns) await fn();
  const samples = fns.map(() => []);
  for (let i = 0; i < n; i++) {
    for (const [k, fn] of fns.entries()) samples[k].push(await fn());
  }
  return samples.map(stats);
}

async function sideBySide(n, a, b) {
  const [ma, mb] = await interleaved(n, a, b);
  return { a: ma, b: mb };
}

const ms = (x) => `${x.toFixed(x < 10 ? 2 : 1)} ms`;
const ratio = (a, b) => `${(a / b).toFixed(2)}×`;
const rows = [];
/** One row of the table: `value` and `baseline` are stats() (min and median); the ratio is of the medians. */
function report(name, value, baselineName, baseline, note = '') {
  rows.push({
    name,
    value: ms(value.median),
    min: ms(value.min),
    baselineName,
    baseline: baseline === undefined ? '' : ms(baseline.median),
    baselineMin: baseline === undefined ? '' : ms(baseline.min),
    ratio: baseline === undefined ? '' : ratio(value.median, baseline.median),
    note,
  });
}
function skipped(name, why) {
  rows.push({ name, value: 'skipped', min: '', baselineName: '', baseline: '', baselineMin: '', ratio: '', note: why });
}

async function section(name, fn) {
  const start = performance.now();
  try {
    await fn();
  } catch (err) {
    skipped(name, String(err.message).split('\n')[0]);
  }
  process.stderr.write(`bench: ${name} done in ${((performance.now() - start) / 1000).toFixed(1)} s\n`);
}

// 1. `ralphkit install` into an empty git repository vs starting node and doing nothing; `ralphkit --version`
// (start-up alone: the CLI loaded, its options parsed) in the same rounds shows what the install itself costs. And
// against the anchor issue #28 names, a scaffolder people run with npx: create-vite writing its vanilla template into
// a new folder (installed once into ~/.cache/ralphkit-bench; the row is skipped, with why, where npm cannot get it).
const CREATE_VITE = '9.3.0';

function createViteBin() {
  const dir = path.join(homedir(), '.cache', 'ralphkit-bench', `create-vite-${CREATE_VITE}`);
  const bin = path.join(dir, 'node_modules', 'create-vite', 'index.js');
  if (!existsSync(bin))
    execFileSync(
      'npm',
      ['install', '--prefix', dir, '--no-audit', '--no-fund', '--silent', `create-vite@${CREATE_VITE}`],
      { stdio: 'pipe' },
    );
  return bin;
}

async function benchInstall() {
  const n = QUICK ? 5 : 15;
  const install = async () => {
    const repo = gitRepo('install');
    return timed(process.execPath, [BIN, 'install', '--yes', '--cwd', repo]);
  };
  const startup = () => timed(process.execPath, [BIN, '--version']);
  const bare = () => timed(process.execPath, ['-e', '0']);
  let vite = null;
  let why = '';
  try {
    vite = createViteBin();
  } catch (err) {
    why = `create-vite ${CREATE_VITE} could not be installed: ${String(err.message).split('\n')[0]}`;
  }
  const scaffold = () =>
    timed(process.execPath, [vite, '--template', 'vanilla', '--no-interactive', '--no-immediate', 'app'], {
      cwd: tempdir('vite'),
    });
  const [a, s, b, v] = await interleaved(n, install, startup, bare, ...(vite ? [scaffold] : []));
  report(
    '`ralphkit install` into an empty git repo',
    a,
    '`node -e 0`',
    b,
    `${n} runs each; start-up alone (\`ralphkit --version\`) median ${ms(s.median)}, ${ratio(s.median, b.median)}`,
  );
  if (!v) return skipped('`ralphkit install` against create-vite', why);
  report(
    '`ralphkit install` into an empty git repo',
    a,
    `create-vite ${CREATE_VITE} (\`--template vanilla\` into a new folder)`,
    v,
    `goal (issue #28): ≤ 1.0×; ${n} runs each, interleaved with the row above`,
  );
}

// 2. Runner overhead: the installed ralph.sh with a no-op agent vs a bash loop spawning the same agent.
const PLAN = {
  project: 'Bench',
  branchName: 'ralph/bench',
  userStories: [{ id: 'US-001', title: 'Never done', acceptanceCriteria: ['stays open'], priority: 1, passes: false }],
};

async function benchRunner() {
  const iterations = QUICK ? 5 : 20;
  const n = QUICK ? 3 : 5;
  const repo = gitRepo('runner');
  await timed(process.execPath, [BIN, 'install', '--yes', '--cwd', repo]);
  writeFileSync(path.join(repo, 'ralph/prd.json'), `${JSON.stringify(PLAN, null, 2)}\n`);
  execFileSync('git', ['add', '-A'], { cwd: repo, env: ENV, stdio: 'pipe' });
  execFileSync('git', ['commit', '-qm', 'bench plan'], { cwd: repo, env: ENV, stdio: 'pipe' });
  const prompt = path.join(repo, 'ralph/prompt.md');
  const runner = (count) => async () => {
    rmSync(path.join(repo, 'ralph/.runs'), { recursive: true, force: true });
    const args = [
      'ralph/ralph.sh',
      '--agent-cmd',
      'true',
      '--pause',
      '0',
      '--no-progress-limit',
      String(count + 1),
      String(count),
    ];
    return timed('bash', args, { cwd: repo, expect: [1] });
  };
  // The same agent, spawned the way the runner spawns it: `sh -c` with the prompt file on stdin.
  const loop = `for i in $(seq ${iterations}); do sh -c true < ${JSON.stringify(prompt)}; done`;
  const bare = () => timed('bash', ['-c', loop], { cwd: repo });
  const [many, one, base] = await interleaved(n, runner(iterations), runner(1), bare);
  const marginal = (many.median - one.median) / (iterations - 1);
  report(
    `\`ralph.sh --agent-cmd true --pause 0\`, per iteration (${iterations} iterations)`,
    per(many, iterations),
    'bash loop spawning `sh -c true`',
    per(base, iterations),
    `start-up + 1 iteration ${ms(one.median)}; each further iteration ${ms(marginal)} (${ratio(marginal, base.median / iterations)} the bare loop), from medians; ${n} runs each`,
  );
}

// 2b. The cost of an honest story (SPEC §6: fresh checkouts, pins, guards, the final gate), this engine against two
// sides: the engine of an earlier commit (RALPHKIT_BENCH_BASELINE, default 190ef20, the engine before the sealed
// verification), built from git into a temp folder, and an anchor without ralphkit, a bash script that for each
// story starts the same agent once the way the runner does (`sh -c`, the prompt on stdin) and then runs that story's
// check once. The engines run `node ralph/ralph.mjs run` with the honest fake agent (test/fixtures/verify/honest.mjs:
// one story per iteration, its check a grep of its file); every side works in its own copy of one repository.
const BASELINE_COMMIT = process.env.RALPHKIT_BENCH_BASELINE || '190ef20';

function buildBaselineEngine(commit = BASELINE_COMMIT) {
  const dir = tempdir('baseline');
  const sh = (cmd) => execFileSync('sh', ['-c', cmd], { cwd: dir, env: ENV, stdio: 'pipe' });
  sh(`git -C ${JSON.stringify(ROOT)} archive ${commit} src scripts templates package.json | tar -x`);
  sh(`ln -s ${JSON.stringify(path.join(ROOT, 'node_modules'))} node_modules && node scripts/build.mjs`);
  return path.join(dir, 'dist/ralph.mjs');
}

/** A git repository with ralphkit installed and `plan` committed: the template each measured run copies. */
async function planRepo(prefix, plan) {
  const template = gitRepo(prefix);
  await timed(process.execPath, [BIN, 'install', '--yes', '--no-skills', '--cwd', template]);
  writeFileSync(path.join(template, 'ralph/prd.json'), `${JSON.stringify(plan, null, 2)}\n`);
  execFileSync('git', ['add', '-A'], { cwd: template, env: ENV, stdio: 'pipe' });
  execFileSync('git', ['commit', '-qm', 'bench plan'], { cwd: template, env: ENV, stdio: 'pipe' });
  return template;
}

/** A fresh copy of the repository `template`, in a temp folder. */
function copyOf(template) {
  const repo = tempdir('run');
  execFileSync('cp', ['-a', `${template}/.`, repo]);
  return repo;
}

/** A word for `sh`: `text` in single quotes, its own single quotes escaped. */
const shellWord = (text) => `'${text.replaceAll("'", `'\\''`)}'`;

/** `node ralph/ralph.mjs run ...args` in a copy of `template`, with an older engine committed in it when given. */
function runEngine(template, engine, args) {
  const repo = copyOf(template);
  if (engine) {
    writeFileSync(path.join(repo, 'ralph/ralph.mjs'), readFileSync(engine));
    execFileSync('git', ['commit', '-qam', 'older engine'], { cwd: repo, env: ENV, stdio: 'pipe' });
  }
  // An older engine that checks its own install would refuse the swapped file; the flag lets it run as it was.
  const allow =
    engine && readFileSync(engine, 'utf8').includes('--allow-modified-engine') ? ['--allow-modified-engine'] : [];
  return timed(process.execPath, ['ralph/ralph.mjs', 'run', ...allow, ...args], { cwd: repo });
}

async function benchHonest() {
  const stories = QUICK ? 2 : 4;
  const n = QUICK ? 3 : 5;
  const oldEngine = buildBaselineEngine();
  const plan = {
    project: 'Bench',
    branchName: 'ralph/bench',
    checks: ['test -f README.md'],
    userStories: Array.from({ length: stories }, (_, i) => ({
      id: `US-${i + 1}`,
      title: `Story ${i + 1}`,
      acceptanceCriteria: ['done'],
      priority: i + 1,
      passes: false,
      notes: '',
      checks: [`grep -q "US-${i + 1} done" US-${i + 1}.txt`],
    })),
  };
  const template = await planRepo('honest', plan);
  const agent = `node ${JSON.stringify(path.join(ROOT, 'test/fixtures/verify/honest.mjs'))}`;
  const loop = (engine) => () =>
    runEngine(template, engine, ['--agent-cmd', agent, '--pause', '0', String(stories + 1)]);
  // The anchor: per story the agent once, then the story's check once (`set -e`: a check that fails fails the run).
  const steps = plan.userStories.map(
    (s) => `sh -c ${shellWord(agent)} < ralph/prompt.md > /dev/null\nsh -c ${shellWord(s.checks[0])}`,
  );
  const anchor = () => timed('bash', ['-c', `set -e\n${steps.join('\n')}`], { cwd: copyOf(template) });
  const [now, before, bare] = await interleaved(n, loop(null), loop(oldEngine), anchor);
  const whole = `whole loop, medians: this engine ${ms(now.median)}, the engine of ${BASELINE_COMMIT} ${ms(before.median)}, the anchor ${ms(bare.median)}`;
  report(
    `an honest loop of ${stories} stories, per story (this engine)`,
    per(now, stories),
    'bash: the same agent, then the story check, once per story',
    per(bare, stories),
    `goal ≤ 2×; ${whole}; ${n} runs each`,
  );
  report(
    `an honest loop of ${stories} stories, per story (this engine)`,
    per(now, stories),
    `the engine of ${BASELINE_COMMIT}`,
    per(before, stories),
    `fresh sealed checkout per claim, weak-check probe, final gate; ${n} runs each`,
  );
}

// 2d. An agent that prints a lot: test/fixtures/agents/flood.mjs writing 10 MB of plain text before its answer, run by
// this engine and by the engine before agent output was bounded (RALPHKIT_BENCH_OUTPUT_BASELINE, default 36f6500).
const OUTPUT_BASELINE = process.env.RALPHKIT_BENCH_OUTPUT_BASELINE || '36f6500';

async function benchOutput() {
  const n = QUICK ? 3 : 5;
  const oldEngine = buildBaselineEngine(OUTPUT_BASELINE);
  const plan = {
    project: 'Bench',
    branchName: 'ralph/bench',
    checks: ['test -f README.md'],
    userStories: [{ id: 'US-001', title: 'Talk a lot', acceptanceCriteria: ['done'], priority: 1, passes: false }],
  };
  const template = await planRepo('output', plan);
  const agent = `FLOOD_MB=10 node ${JSON.stringify(path.join(ROOT, 'test/fixtures/agents/flood.mjs'))}`;
  const loop = (engine) => () => runEngine(template, engine, ['--agent-cmd', agent, '--pause', '0', '1']);
  const [now, before] = await interleaved(n, loop(null), loop(oldEngine));
  report(
    'a one-story loop whose agent prints 10 MB (this engine)',
    now,
    `the engine of ${OUTPUT_BASELINE}`,
    before,
    `output streamed to the log, bounded tails in memory; ${n} runs each`,
  );
}

// 2e. `--parallel 4` against the serial loop on 8 independent stories (scripts/bench-parallel.mjs).
function benchParallelPart() {
  return benchParallel({ QUICK, ROOT, ENV, tempdir, planRepo, timed, report, stats });
}

// 2f. A project's shape (scripts/bench-replay.mjs): an npm dependency, `setup: "npm ci"`, six `node --test` stories
// in a dependency chain; bare work, the serial loop and `--parallel 3` with and without `dependsOn`, interleaved.
function benchReplayPart() {
  return benchReplay({ QUICK, ENV, planRepo, copyOf, timed, timedRun, report, stats, ratio });
}

// 2c. The runner's own CPU per iteration, flat in the plan's size: a no-op agent (`true`) on a plan of 10 and of
// 5,000 stories (a dependency chain), this engine against the engine before the redesign (RALPHKIT_BENCH_CPU_BASELINE,
// default 71e65ad), side by side. CPU is the runner's and every process it starts (git, the agent), read with bash's
// `times` after the run; per iteration = (21 iterations - 1 iteration) / 20, so start-up is left out.
const CPU_BASELINE = process.env.RALPHKIT_BENCH_CPU_BASELINE || '71e65ad';

function childCpuMs(script, cwd) {
  const out = execFileSync('bash', ['-c', `${script} >/dev/null 2>&1; times`], { cwd, env: ENV, encoding: 'utf8' });
  // `times` prints the shell's own user/sys, then its children's: "0m1.212s 0m1.013s".
  const [user, sys] = out
    .trim()
    .split('\n')
    .pop()
    .split(/\s+/)
    .map((t) => {
      const m = /^(\d+)m([\d.]+)s$/.exec(t);
      return m ? (Number(m[1]) * 60 + Number(m[2])) * 1000 : NaN;
    });
  return user + sys;
}

async function benchCpu() {
  const n = QUICK ? 3 : 5;
  const oldEngine = buildBaselineEngine(CPU_BASELINE);
  for (const count of [10, 5000]) {
    const template = gitRepo(`cpu-${count}`);
    await timed(process.execPath, [BIN, 'install', '--yes', '--no-skills', '--cwd', template]);
    const id = (i) => `US-${String(i).padStart(4, '0')}`;
    const userStories = Array.from({ length: count }, (_, i) => ({
      id: id(i + 1),
      title: `Story ${i + 1}`,
      acceptanceCriteria: ['done'],
      priority: i + 1,
      passes: false,
      notes: '',
      dependsOn: i ? [id(i)] : [],
    }));
    writeFileSync(
      path.join(template, 'ralph/prd.json'),
      `${JSON.stringify({ project: 'Bench', branchName: 'ralph/bench', checks: ['test -f README.md'], userStories }, null, 2)}\n`,
    );
    execFileSync('git', ['add', '-A'], { cwd: template, env: ENV, stdio: 'pipe' });
    execFileSync('git', ['commit', '-qm', 'bench plan'], { cwd: template, env: ENV, stdio: 'pipe' });
    const run = (engine, iterations) => {
      const repo = tempdir(`cpu-run-${count}`);
      execFileSync('cp', ['-a', `${template}/.`, repo]);
      if (engine) {
        writeFileSync(path.join(repo, 'ralph/ralph.mjs'), readFileSync(engine));
        execFileSync('git', ['commit', '-qam', 'older engine'], { cwd: repo, env: ENV, stdio: 'pipe' });
      }
      const flags = `--agent-cmd true --pause 0 --no-progress-limit 100${engine ? ' --allow-modified-engine' : ''}`;
      const cpu = childCpuMs(`node ralph/ralph.mjs run ${flags} ${iterations}`, repo);
      rmSync(repo, { recursive: true, force: true });
      return cpu;
    };
    const samples = { now21: [], now1: [], old21: [], old1: [] };
    for (let i = 0; i < n; i++) {
      samples.now21.push(run(null, 21));
      samples.old21.push(run(oldEngine, 21));
      samples.now1.push(run(null, 1));
      samples.old1.push(run(oldEngine, 1));
    }
    // Per iteration from the medians, and from the minima (the least disturbed run of each length).
    const perIteration = (many, one) => ({
      min: (Math.min(...many) - Math.min(...one)) / 20,
      median: (median(many) - median(one)) / 20,
    });
    const now = perIteration(samples.now21, samples.now1);
    const before = perIteration(samples.old21, samples.old1);
    report(
      `runner CPU per no-op iteration, ${count.toLocaleString('en')} stories`,
      now,
      `the engine of ${CPU_BASELINE}`,
      before,
      `CPU of the runner and its children (bash times), (21 - 1 iterations) / 20; ${n} runs each`,
    );
  }
}

// 3. `ralphkit validate` on 5,000- and 50,000-story plans vs node merely parsing the same file; also both in-process.
/** A test helper written in TypeScript, bundled on the fly; null when it does not exist (yet). */
async function importHelper(rel) {
  const file = path.join(ROOT, rel);
  if (!existsSync(file)) return null;
  const { build } = await import('esbuild');
  const out = await build({
    entryPoints: [file],
    bundle: true,
    format: 'esm',
    platform: 'node',
    packages: 'external',
    write: false,
    logLevel: 'silent',
  });
  return import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`);
}

async function largePlan(count) {
  const helper = await importHelper('test/support/large-plan.ts');
  if (typeof helper?.makeLargePlan === 'function') return helper.makeLargePlan(count);
  const userStories = Array.from({ length: count }, (_, i) => ({
    id: `US-${String(i + 1).padStart(4, '0')}`,
    title: `Story ${i + 1}`,
    acceptanceCriteria: ['works', 'typecheck passes'],
    priority: i + 1,
    passes: i % 3 === 0,
    dependsOn: i > 0 ? [`US-${String(i).padStart(4, '0')}`] : [],
  }));
  return { project: 'Large', branchName: 'ralph/large', checks: ['npm test'], userStories };
}

async function benchValidate() {
  const n = QUICK ? 3 : 7;
  const dir = tempdir('validate');
  for (const count of [5000, 50000]) {
    const file = path.join(dir, `prd-${count}.json`);
    const plan = await largePlan(count);
    const text = typeof plan === 'string' ? plan : `${JSON.stringify(plan, null, 2)}\n`;
    writeFileSync(file, text);
    const stories = JSON.parse(text).userStories.length;
    const size = `${(text.length / 1e6).toFixed(1)} MB`;
    const validate = () => timed(process.execPath, [BIN, 'validate', file], { cwd: dir });
    const parse = () =>
      timed(process.execPath, ['-e', 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))', file]);
    const r = await sideBySide(n, validate, parse);
    report(
      `\`ralphkit validate\` on a ${stories.toLocaleString('en')}-story plan`,
      r.a,
      '`node` reading + JSON.parse of it',
      r.b,
      `${size}; ${n} runs each`,
    );
    // The work alone, once the process is up: each side runs once in a fresh process (cold, as in the CLI) and
    // reports the time around that one call; process start and module loading are left out.
    const bundled = await bundleHelper('src/prd/run-validate.ts', dir);
    if (!bundled) continue;
    const m = QUICK ? 5 : 11;
    const inValidate = () =>
      timedInside(
        `const { runValidate } = await import(${JSON.stringify(pathToFileURL(bundled).href)}); const t = performance.now(); runValidate({ file: process.argv[1] }); console.log(performance.now() - t);`,
        file,
      );
    const inParse = () =>
      timedInside(
        'const { readFileSync } = await import("node:fs"); const t = performance.now(); JSON.parse(readFileSync(process.argv[1], "utf8")); console.log(performance.now() - t);',
        file,
      );
    const q = await sideBySide(m, inValidate, inParse);
    report(
      `\`runValidate\` alone, ${stories.toLocaleString('en')} stories (fresh process, start-up excluded)`,
      q.a,
      '`readFileSync` + JSON.parse alone',
      q.b,
      `${size}; ${m} runs each`,
    );
  }
}

/** A helper bundled into a file in `dir` (for a child process to import); null when it does not exist. */
async function bundleHelper(rel, dir) {
  const file = path.join(ROOT, rel);
  if (!existsSync(file)) return null;
  const { build } = await import('esbuild');
  const outfile = path.join(dir, `${path.basename(rel, '.ts')}.mjs`);
  await build({
    entryPoints: [file],
    bundle: true,
    format: 'esm',
    platform: 'node',
    packages: 'external',
    outfile,
    logLevel: 'silent',
  });
  return outfile;
}

/** Runs an ES module snippet in a fresh node; resolves with the milliseconds it prints. */
function timedInside(code, arg) {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', code, arg],
      { env: ENV, maxBuffer: 1 << 20 },
      (err, stdout, stderr) => {
        const value = Number(String(stdout).trim());
        if (err || !Number.isFinite(value))
          reject(
            new Error(
              `timing child failed: ${String(stderr || err?.message)
                .trim()
                .split('\n')
                .pop()}`,
            ),
          );
        else resolve(value);
      },
    );
  });
}

// 4. Dashboard: from writing prd.json to the new text being in the page's DOM, in headless Chromium.
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

async function waitForHttp(url, child, deadlineMs = 15_000) {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    if (child.exitCode !== null) throw new Error(`ralphkit view exited ${child.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await sleep(50);
  }
  throw new Error(`ralphkit view did not answer at ${url}`);
}

async function benchDashboard() {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}`);
  const n = QUICK ? 3 : 10;
  const repo = gitRepo('view');
  mkdirSync(path.join(repo, 'ralph'), { recursive: true });
  const prdFile = path.join(repo, 'ralph/prd.json');
  const writePlan = (title) =>
    writeFileSync(
      prdFile,
      `${JSON.stringify({ ...PLAN, userStories: [{ ...PLAN.userStories[0], title }] }, null, 2)}\n`,
    );
  writePlan('bench-title-0');
  writeFileSync(path.join(repo, 'ralph/progress.txt'), '# Ralph progress\n');
  const port = await freePort();
  const view = spawn(process.execPath, [BIN, 'view', '--port', String(port)], { cwd: repo, env: ENV, stdio: 'ignore' });
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    await waitForHttp(`http://127.0.0.1:${port}/api/prd`, view);
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.waitForFunction((t) => document.body.innerText.includes(t), 'bench-title-0', { timeout: 10_000 });
    const helper = await importHelper('test/support/view-latency.ts');
    // If the helper no longer fits the page's markup, measure with the markup-independent method instead.
    const viaHelper = helper?.measureFlipLatency ? await flipLatency(helper, page, repo, n).catch(() => null) : null;
    const { samples, how } = viaHelper ?? (await titleLatency(page, writePlan, n));
    report(
      '`ralphkit view`: prd.json written → page updated',
      stats(samples),
      '',
      undefined,
      `${how}; headless Chromium; ${n} samples, max ${ms(Math.max(...samples))}`,
    );
  } finally {
    await browser.close();
    view.kill();
  }
}

// The dashboard helper's own measure: flip `passes`, time until the card's state changes (MutationObserver).
async function flipLatency(helper, page, repo, n) {
  const prd = JSON.parse(readFileSync(path.join(repo, 'ralph/prd.json'), 'utf8'));
  await page.waitForSelector(`.card[data-story-id="${prd.userStories[0].id}"]`, { timeout: 10_000 });
  const result = await helper.measureFlipLatency(page, repo, prd, prd.userStories[0].id, n);
  return { samples: result.samples, how: 'story flipped → its card changes state' };
}

// Markup-independent fallback: retitle the story, time until the new title is in the page's text.
async function titleLatency(page, writePlan, n) {
  const samples = [];
  for (let i = 1; i <= n; i++) {
    const title = `bench-title-${i}`;
    await sleep(300); // let the watcher settle so each sample is one change, not a burst
    const start = performance.now();
    writePlan(title);
    await page.waitForFunction((t) => document.body.innerText.includes(t), title, { timeout: 10_000, polling: 'raf' });
    samples.push(performance.now() - start);
  }
  return { samples, how: 'story retitled → new title in the DOM' };
}

// 5. The dashboard's /api/prd on a 5,000-story plan, every story a link in a dependency chain, from the built
// `ralphkit view` on a temp repo, timed from the request to the last byte. Against the anchor the issue names: the
// same bytes as a static file, served by a plain Node server that reads the file for each request. Asked again with
// nothing changed (the body made once per change, view/memo.ts: what every open page and each refetch gets), after a
// change (the plan written again, same bytes, by temp file and rename: the body made anew), with and without a ledger
// of 3,334 lines, and after a real change: one story's passes flipped (each run flips it back or forth, so every run
// reads a plan that differs from the one before, as the runner writes it when a story passes).
async function benchApi() {
  const n = QUICK ? 5 : 15;
  const count = 5000;
  const plan = await largePlan(count);
  const chain = typeof plan === 'string' ? JSON.parse(plan) : plan;
  const keyDir = tempdir('api-key');
  writeFileSync(path.join(keyDir, 'verdict.key'), Buffer.alloc(32, 7), { mode: 0o600 });
  const servers = [];
  const get = async (url) => {
    const t0 = performance.now();
    const res = await fetch(url);
    const body = await res.text();
    if (!res.ok || !body.includes('"cards"')) throw new Error(`${url} answered ${res.status}`);
    return { ms: performance.now() - t0, body };
  };
  const text = `${JSON.stringify(chain, null, 2)}\n`;
  // The same plan with the passes of one story in the middle flipped.
  const middle = count >> 1;
  const flippedText = `${JSON.stringify(
    { ...chain, userStories: chain.userStories.map((s, i) => (i === middle ? { ...s, passes: !s.passes } : s)) },
    null,
    2,
  )}\n`;
  const start = async (withLedger) => {
    const repo = gitRepo('api');
    mkdirSync(path.join(repo, 'ralph'), { recursive: true });
    const prdFile = path.join(repo, 'ralph/prd.json');
    writeFileSync(prdFile, text);
    writeFileSync(path.join(repo, 'ralph/progress.txt'), '# Ralph progress\n');
    if (withLedger) writeLedger(repo, chain);
    const port = await freePort();
    const child = spawn(process.execPath, [BIN, 'view', '--port', String(port)], {
      cwd: repo,
      env: { ...ENV, RALPH_KEY_DIR: keyDir },
      stdio: 'ignore',
    });
    servers.push(child);
    const url = `http://127.0.0.1:${port}/api/prd`;
    await waitForHttp(url, child);
    // The plan written again as an editor or the runner writes it: a temp file renamed over it.
    const rewrite = (bytes = text) => {
      writeFileSync(`${prdFile}.tmp`, bytes);
      renameSync(`${prdFile}.tmp`, prdFile);
    };
    let flips = 0;
    return {
      url,
      again: async () => (await get(url)).ms,
      changed: async () => {
        rewrite();
        return (await get(url)).ms;
      },
      flipped: async () => {
        rewrite(++flips % 2 ? flippedText : text);
        const { ms, body } = await get(url);
        // The answer must be the plan just written, not a body kept from before.
        const passes = JSON.parse(body).prd.userStories[middle].passes;
        if (passes !== (flips % 2 ? !chain.userStories[middle].passes : chain.userStories[middle].passes))
          throw new Error('/api/prd answered with the plan before the flip');
        return ms;
      },
    };
  };
  const staticServer = async (bytesFile) => {
    const port = await freePort();
    const code = `const fs=require('fs');require('http').createServer((q,s)=>{const b=fs.readFileSync(process.argv[1]);s.writeHead(200,{'Content-Type':'application/json; charset=utf-8','Content-Length':b.length});s.end(b)}).listen(${port},'127.0.0.1')`;
    const child = spawn(process.execPath, ['-e', code, bytesFile], { stdio: 'ignore' });
    servers.push(child);
    const url = `http://127.0.0.1:${port}/`;
    await waitForHttp(url, child);
    return async () => (await get(url)).ms;
  };
  try {
    const [bare, flip, ledger] = [await start(false), await start(false), await start(true)];
    const bytesFile = path.join(tempdir('api-static'), 'prd.json');
    const body = (await get(bare.url)).body;
    writeFileSync(bytesFile, body);
    const file = await staticServer(bytesFile);
    const [mAgain, mFile, mChanged, mFlipped, mLedger] = await interleaved(
      n,
      bare.again,
      file,
      bare.changed,
      flip.flipped,
      ledger.changed,
    );
    const what = `${count.toLocaleString('en')}-story chain`;
    const size = `${(Buffer.byteLength(body) / 1e6).toFixed(2)} MB body`;
    report(
      `\`/api/prd\`, ${what}, asked again with nothing changed`,
      mAgain,
      'a static file of the same bytes',
      mFile,
      `goal ≤ 2×; ${size}; ${n} runs each`,
    );
    report(
      `\`/api/prd\`, ${what}, after the plan was written again`,
      mChanged,
      'a static file of the same bytes',
      mFile,
      `the body made anew; ${n} runs each`,
    );
    report(
      `\`/api/prd\`, ${what}, after one story's passes flipped`,
      mFlipped,
      'a static file of the same bytes',
      mFile,
      `goal ≤ 2×; the plan differs each run; ${n} runs each`,
    );
    const lines = chain.userStories.filter((s) => s.passes).length * 2;
    report(
      `\`/api/prd\`, ${what} + ${lines.toLocaleString('en')} ledger lines, after the plan was written again`,
      mLedger,
      'the chain without a ledger',
      mChanged,
      `a check and a verdict per passing story; ${n} runs each`,
    );
  } finally {
    for (const child of servers) child.kill();
  }
}

/** A check line and a verdict line for every passing story, in one loop's ledger. */
function writeLedger(repo, prd) {
  const dir = path.join(repo, 'ralph/.runs/L1');
  mkdirSync(dir, { recursive: true });
  const lines = [];
  prd.userStories.forEach((s, i) => {
    if (!s.passes) return;
    const time = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
    lines.push({
      kind: 'check',
      scope: 'prd',
      time,
      loop: 'L1',
      iteration: i + 1,
      story: s.id,
      commit: null,
      command: 'npm test',
      exitCode: 0,
      signal: null,
      timedOut: false,
      durationMs: 12,
      outputSha256: 'h',
    });
    lines.push({
      kind: 'verdict',
      time,
      loop: 'L1',
      iteration: i + 1,
      story: s.id,
      commit: null,
      command: null,
      exitCode: null,
      status: 'verified',
      durationMs: 12,
      outputSha256: null,
    });
  });
  writeFileSync(path.join(dir, 'ledger.jsonl'), `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
}

function machine() {
  const model = cpus()[0]?.model ?? 'unknown CPU';
  const load = loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
  return `${availableParallelism()} CPUs (${model}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Node ${process.version}, ${process.platform}/${process.arch}; load average ${load}`;
}

function printTable() {
  const header = ['measure', 'median', 'min', 'baseline', 'baseline median', 'baseline min', 'ratio', 'note'];
  const lines = rows.map((r) => [r.name, r.value, r.min, r.baselineName, r.baseline, r.baselineMin, r.ratio, r.note]);
  console.log(`machine: ${machine()}\n`);
  console.log(`| ${header.join(' | ')} |`);
  console.log(`|${header.map(() => '---').join('|')}|`);
  for (const l of lines) console.log(`| ${l.join(' | ')} |`);
}

try {
  if (!existsSync(path.join(ROOT, 'dist/cli.js')))
    throw new Error('dist/cli.js is missing: run `npm run bench` (it builds first)');
  const only = process.argv
    .find((a) => a.startsWith('--only='))
    ?.slice('--only='.length)
    .split(',');
  const parts = {
    install: benchInstall,
    runner: benchRunner,
    cpu: benchCpu,
    honest: benchHonest,
    output: benchOutput,
    parallel: benchParallelPart,
    replay: benchReplayPart,
    validate: benchValidate,
    dashboard: benchDashboard,
    api: benchApi,
  };
  for (const [name, fn] of Object.entries(parts)) if (!only || only.includes(name)) await section(name, fn);
  printTable();
} finally {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
}
