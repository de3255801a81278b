// The `replay` part of `npm run bench`: the shape of a real project, from scripts/bench-fixtures/replay/. A small
// Node project with one npm dependency (ms, pinned in a committed package-lock.json), `setup: "npm ci"`, and six
// stories whose tests are written up front (test/<id>.test.mjs, each story's check `node --test` of its file); three
// stories build on the code of others (US-003 on US-001, US-004 on US-002 and US-003, US-006 on US-004 and US-005).
// The agent (bench-fixtures/replay/agent.mjs) copies its story's prepared change and claims it, at once, so what
// is measured is the work around the agent: installs, checks, verification, merges. Four sides, interleaved:
//   bare        bench-fixtures/replay/bare.sh: `npm ci` once, then each change and its test once, in plan order;
//   serial      `ralph/ralph.sh --agent-cmd <agent> --pause 0 12`;
//   declared    the same with `--parallel 3`, the plan's `dependsOn` as written;
//   undeclared  the same with `--parallel 3` on a copy of the plan without `dependsOn`: what an owner who forgot
//               them gets, reported as stories passing and exit code, not required to finish.
// Every side starts from a copy of one repository; 12 iterations (agent runs, over all workers) is twice the stories.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';

const FIXTURE = path.join(import.meta.dirname, 'bench-fixtures/replay');
const WORKERS = 3;
const ITERATIONS = 12;

/** The plan, with its `dependsOn` left out when `declared` is false. */
function plan(declared) {
  const prd = JSON.parse(readFileSync(path.join(FIXTURE, 'prd.json'), 'utf8'));
  if (!declared) for (const story of prd.userStories) delete story.dependsOn;
  return prd;
}

/** What the repository of one loop records after it: its stories passing on the plan branch, and its ledger. */
function outcome(repo, env, branch) {
  let passing = 0;
  try {
    const text = execFileSync('git', ['show', `${branch}:ralph/prd.json`], { cwd: repo, env, encoding: 'utf8' });
    passing = JSON.parse(text).userStories.filter((s) => s.passes === true).length;
  } catch {
    // No plan branch: the loop stopped before its first commit; nothing passes.
  }
  return { passing, ledger: ledgerCounts(repo) };
}

/**
 * Counts from the loop's ledgers (ralph/.runs/<id>/ledger.jsonl): `probes`, the start-of-run runs of each story check
 * on the plan commit; `checks`, check lines of a command really run (not `shared`, which marks a result recorded
 * again from another run); `setups`, setup lines not `shared`, and `reused`, those that are (an install copied from
 * the loop's cache or the same run as above). The install the start probe needed writes no line, so `setups`
 * undercounts installs by that one.
 */
function ledgerCounts(repo) {
  const runs = path.join(repo, 'ralph/.runs');
  const files = existsSync(runs) ? readdirSync(runs).map((d) => path.join(runs, d, 'ledger.jsonl')) : [];
  const lines = files
    .filter((f) => existsSync(f))
    .flatMap((f) => readFileSync(f, 'utf8').split('\n').filter(Boolean))
    .map((line) => JSON.parse(line));
  const checks = lines.filter((l) => l.kind === 'check');
  const setup = checks.filter((l) => l.scope === 'setup');
  return {
    probes: lines.filter((l) => l.kind === 'probe').length,
    checks: checks.filter((l) => l.scope !== 'setup' && !l.shared).length,
    setups: setup.filter((l) => !l.shared).length,
    reused: setup.filter((l) => l.shared).length,
  };
}

/** The runs' ledger counts as one phrase; runs that differ are listed one after the other. */
function describeLedgers(samples) {
  const texts = samples.map(
    ({ ledger: l }) => `${l.probes} probes + ${l.checks} checks run, setup ${l.setups} run + ${l.reused} reused`,
  );
  return [...new Set(texts)].join(' / ');
}

/** The argument is what bench.mjs shares with its parts. */
export async function benchReplay({ QUICK, ENV, planRepo, copyOf, timed, timedRun, report, stats, ratio }) {
  const n = QUICK ? 3 : 5;
  const repoWith = async (prd) => {
    const repo = await planRepo('replay', prd);
    execFileSync('cp', ['-a', `${path.join(FIXTURE, 'project')}/.`, repo]);
    execFileSync('git', ['add', '-A'], { cwd: repo, env: ENV, stdio: 'pipe' });
    execFileSync('git', ['commit', '-qm', 'the project: package.json, its lockfile, the tests'], {
      cwd: repo,
      env: ENV,
      stdio: 'pipe',
    });
    return repo;
  };
  const declaredPlan = plan(true);
  const declared = await repoWith(declaredPlan);
  const undeclared = await repoWith(plan(false));
  const ids = declaredPlan.userStories.map((s) => s.id);
  const agent = `node ${JSON.stringify(path.join(FIXTURE, 'agent.mjs'))}`;

  const bare = async () => ({
    ms: await timed('sh', [path.join(FIXTURE, 'bare.sh'), ...ids], { cwd: copyOf(declared) }),
  });
  const loop = (template, workers) => async () => {
    const repo = copyOf(template);
    try {
      const parallel = workers > 1 ? ['--parallel', String(workers)] : [];
      const args = ['ralph/ralph.sh', ...parallel, '--agent-cmd', agent, '--pause', '0', String(ITERATIONS)];
      const run = await timedRun('bash', args, { cwd: repo });
      return {
        ms: run.ms,
        code: run.code,
        tail: run.output.trim().split('\n').pop(),
        ...outcome(repo, ENV, declaredPlan.branchName),
      };
    } finally {
      rmSync(repo, { recursive: true, force: true });
      rmSync(`${repo}.ralph-worktrees`, { recursive: true, force: true });
    }
  };
  // A loop that must finish: every story passing on the plan branch and exit 0, else the part is skipped.
  const finished = (measure, what) => async () => {
    const run = await measure();
    if (run.code !== 0 || run.passing !== ids.length)
      throw new Error(`${what}: ${run.passing} of ${ids.length} stories passing, exit ${run.code}: ${run.tail}`);
    return run;
  };
  const sides = {
    bare,
    serial: finished(loop(declared, 1), 'the serial loop'),
    declared: finished(loop(declared, WORKERS), `--parallel ${WORKERS}`),
    undeclared: loop(undeclared, WORKERS),
  };
  // One unmeasured bare run first: it fills npm's cache and the file cache for every side alike. There is no
  // warm-up of the loops (each takes seconds, and making the repositories has already run the built engine).
  await bare();
  const samples = { bare: [], serial: [], declared: [], undeclared: [] };
  for (let i = 0; i < n; i++) for (const [name, measure] of Object.entries(sides)) samples[name].push(await measure());
  const times = (name) => stats(samples[name].map((s) => s.ms));
  const [tBare, tSerial, tDeclared, tUndeclared] = ['bare', 'serial', 'declared', 'undeclared'].map(times);
  const loopArgs = `--agent-cmd <agent> --pause 0 ${ITERATIONS}`;
  report(
    `replay: the serial loop, 6 stories, \`npm ci\` + \`node --test\` (\`ralph.sh ${loopArgs}\`)`,
    tSerial,
    'bare work (`npm ci` once, each change and its test once)',
    tBare,
    `goal ≤ 2×; ledger per loop: ${describeLedgers(samples.serial)}; ${n} runs each`,
  );
  report(
    `replay: \`--parallel ${WORKERS}\`, \`dependsOn\` declared`,
    tDeclared,
    'the serial loop',
    tSerial,
    `goal ≤ 0.7×; ${ratio(tDeclared.median, tBare.median)} the bare work; ledger per loop: ${describeLedgers(samples.declared)}; ${n} runs each`,
  );
  const passing = samples.undeclared.map((s) => s.passing).join(', ');
  const codes = samples.undeclared.map((s) => s.code).join(', ');
  report(
    `replay: \`--parallel ${WORKERS}\`, \`dependsOn\` left out`,
    tUndeclared,
    'the serial loop',
    tSerial,
    `goal: every story passes; stories passing per run ${passing} of ${ids.length}, exit codes ${codes}; ledger per loop: ${describeLedgers(samples.undeclared)}; ${n} runs each`,
  );
}
