// Issue #27's Ctrl-C trial (not a test: random moments, real time): ralph/ralph.sh with a fake agent, started in a
// process group of its own as a terminal would, gets SIGINT to the whole group at a random moment of its run; then
// --resume-last until it exits 0. Reports every exit code, what the interrupted state said, and what was left behind
// (verification checkouts and log folders in the run's own temp folder, story branches of merged stories).
//   node scripts/trial-interrupt.mjs [--parallel 20] [--single 10] [--seed 1] [--from ms] [--to ms]   (npm run build first)
// --from/--to: the window the signal falls in (default: the whole length of an uninterrupted run).
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const opt = (name, def) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : def);
const TRIALS = { parallel: opt('--parallel', 20), single: opt('--single', 10) };
let seed = opt('--seed', 1);
const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const BRANCH = 'ralph/trial';
const GIT_ENV = {
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@t',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@t',
  GIT_CONFIG_NOSYSTEM: '1',
};
const work = mkdtempSync(path.join(tmpdir(), 'ralphkit-trial-'));

function template(kind) {
  const dir = path.join(work, `template-${kind}`);
  mkdirSync(dir);
  const git = (...a) => execFileSync('git', a, { cwd: dir, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8' });
  git('init', '-q', '-b', 'main');
  writeFileSync(path.join(dir, 'README.md'), '# trial\n');
  execFileSync('node', [path.join(ROOT, 'bin/ralphkit.js'), 'install', '--yes', '--no-skills'], {
    cwd: dir,
    stdio: 'ignore',
  });
  const stories = ['US-001', 'US-002', 'US-003'].map((id, i) => ({
    id,
    title: `Story ${id}`,
    acceptanceCriteria: ['done'],
    priority: i + 1,
    passes: false,
    checks: [`test -f work/${id}.txt`],
  }));
  writeFileSync(
    path.join(dir, 'ralph/prd.json'),
    `${JSON.stringify({ project: 'Trial', branchName: BRANCH, checks: ['test -f README.md'], userStories: stories }, null, 2)}\n`,
  );
  git('add', '-A');
  git('commit', '-q', '-m', 'trial plan');
  return dir;
}

function start(repo, runArgs, tmp) {
  const child = spawn(path.join(repo, 'ralph/ralph.sh'), runArgs, {
    cwd: repo,
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: {
      ...process.env,
      ...GIT_ENV,
      TMPDIR: tmp,
      FORCE_COLOR: '0',
    },
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const started = Date.now();
  const done = new Promise((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stderr, ms: Date.now() - started })),
  );
  return { child, done };
}

function agentArgs(kind) {
  const agent = path.join(ROOT, 'test/fixtures/agents', kind === 'parallel' ? 'story-worker.mjs' : 'worker.mjs');
  return [...(kind === 'parallel' ? ['--parallel', '2'] : []), '--agent-cmd', `node ${agent}`, '--pause', '0', '20'];
}

function leftovers(repo, tmp) {
  const temp = readdirSync(tmp).filter((n) => /^(ralph-verify-|ralphkit-log-)/.test(n));
  const branches = execFileSync('git', ['for-each-ref', '--format=%(refname:short)', `refs/heads/${BRANCH}--*`], {
    cwd: repo,
    encoding: 'utf8',
  })
    .split('\n')
    .filter(Boolean);
  return [...temp, ...branches];
}

async function trial(kind, base, i, durationMs) {
  const repo = path.join(work, `${kind}-${i}`);
  cpSync(base, repo, { recursive: true });
  const tmp = path.join(work, `${kind}-${i}-tmp`, 'tmp');
  mkdirSync(tmp, { recursive: true });
  const run = start(repo, agentArgs(kind), tmp);
  const [from, to] = [opt('--from', 0), opt('--to', durationMs)];
  const delay = from + Math.floor(random() * (to - from));
  await new Promise((r) => setTimeout(r, delay));
  let signalled = false;
  try {
    process.kill(-run.child.pid, 'SIGINT');
    signalled = true;
  } catch {
    /* ended already */
  }
  const first = await run.done;
  const state = readState(repo);
  const resumes = [];
  let last = first;
  // Killed by the SIGINT before the runner's handler was set (node starting): nothing was recorded, so the
  // loop starts again rather than resumes. A shell reports that as 130 too.
  const early = first.signal === 'SIGINT' && state === null;
  for (let n = 0; n < 4 && last.code !== 0; n++) {
    last = await start(repo, early && n === 0 ? agentArgs(kind) : ['--resume-last'], tmp).done;
    resumes.push(last.code);
  }
  const left = leftovers(repo, tmp);
  const unexpected = /unexpected error/.test(first.stderr);
  const row = { kind, i, delay, signalled, exit: first.code, signal: first.signal, state, resumes, left, unexpected };
  if (first.code !== 130 && first.code !== 0) row.stderr = first.stderr.split('\n').slice(-8).join('\n');
  if (last.code !== 0) row.lastStderr = last.stderr.split('\n').slice(-6).join('\n');
  rmSync(repo, { recursive: true, force: true });
  rmSync(`${repo}.ralph-worktrees`, { recursive: true, force: true });
  return row;
}

function readState(repo) {
  try {
    const runs = path.join(repo, 'ralph/.runs');
    const id = readdirSync(runs).find((n) => !n.startsWith('.') && n !== 'locks');
    return JSON.parse(readFileSync(path.join(runs, id, 'state.json'), 'utf8')).status;
  } catch {
    return null;
  }
}

const rows = [];
for (const kind of ['parallel', 'single']) {
  if (!TRIALS[kind]) continue;
  const base = template(kind);
  // One uninterrupted run says how long a run takes: the signal falls uniformly within it.
  const probeTmp = path.join(work, `${kind}-probe-tmp`);
  mkdirSync(probeTmp);
  const probeRepo = path.join(work, `${kind}-probe`);
  cpSync(base, probeRepo, { recursive: true });
  const probe = await start(probeRepo, agentArgs(kind), probeTmp).done;
  console.log(`${kind}: an uninterrupted run takes ${probe.ms} ms (exit ${probe.code})`);
  for (let i = 0; i < TRIALS[kind]; i++) {
    // A run that ended before the signal was not interrupted: that trial is drawn again (at most 3 times).
    let row;
    for (let draw = 0; draw < 3; draw++) {
      row = await trial(kind, base, i, probe.ms);
      if (!(row.exit === 0 && row.state === 'complete')) break;
      console.log(`  (trial ${i}: the run ended before the signal at ${row.delay} ms; drawn again)`);
    }
    rows.push(row);
    console.log(JSON.stringify(row));
  }
}
for (const kind of ['parallel', 'single']) {
  const mine = rows.filter((r) => r.kind === kind);
  if (!mine.length) continue;
  const exits = {};
  for (const r of mine) {
    const key = r.signal ? `killed by ${r.signal} before the loop began` : String(r.exit);
    exits[key] = (exits[key] ?? 0) + 1;
  }
  const resumed = mine.filter((r) => r.exit === 0 || r.resumes.at(-1) === 0).length;
  console.log(
    `${kind}: ${mine.length} trials; first exit codes ${JSON.stringify(exits)}; unexpected errors ${mine.filter((r) => r.unexpected).length}; ended at 0 after resuming ${resumed}/${mine.length}; trials with leftovers ${mine.filter((r) => r.left.length).length}`,
  );
}
rmSync(work, { recursive: true, force: true });
