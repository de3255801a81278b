// The `parallel` part of `npm run bench` (issue #14): a plan of 8 independent stories worked by
// `ralph/ralph.sh --parallel 4` against the serial loop (`ralph/ralph.sh`, one story per iteration), in one run.
// The agent (test/fixtures/agents/paced.mjs) sleeps a fixed time per story before doing it honestly: a real agent's
// minutes dominate a story and are what parallel workers overlap, so with a fixed time the ideal is known (2 rounds
// of 4 against 8 rounds: 0.25×) and what the measured ratio adds to it is the runner's own cost (worktrees,
// verification on the story branch, the merge queue and the checks again after each merge). 2 s keeps that cost
// visible without making the part slow; the goal is ≤ 0.35×.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';

const STORIES = 8;
const WORKERS = 4;
const AGENT_MS = 2000;
const PLAN_BRANCH = 'ralph/bench';

function plan() {
  const id = (i) => `US-${String(i).padStart(3, '0')}`;
  const userStories = Array.from({ length: STORIES }, (_, i) => ({
    id: id(i + 1),
    title: `Story ${i + 1}`,
    acceptanceCriteria: ['its file exists'],
    priority: i + 1,
    passes: false,
    notes: '',
    dependsOn: [],
    checks: [`test -f src/${id(i + 1)}.txt`],
  }));
  return { project: 'Bench', branchName: PLAN_BRANCH, checks: ['test -f README.md'], userStories };
}

/**
 * Measures both sides, interleaved (serial, parallel, serial, ...): `quick` one round, else three. There is no
 * warm-up round (each run takes seconds, and making the template repository has already run the built engine).
 * The argument is what bench.mjs shares with its parts.
 */
export async function benchParallel({ QUICK, ROOT, ENV, tempdir, planRepo, timed, report, stats }) {
  const rounds = QUICK ? 1 : 3;
  const template = await planRepo('parallel', plan());
  const agent = `FAKE_AGENT_MS=${AGENT_MS} node ${JSON.stringify(path.join(ROOT, 'test/fixtures/agents/paced.mjs'))}`;
  const run = async (workers) => {
    const repo = tempdir('parallel-run');
    execFileSync('cp', ['-a', `${template}/.`, repo]);
    try {
      const parallel = workers > 1 ? ['--parallel', String(workers)] : [];
      const args = ['ralph/ralph.sh', ...parallel, '--agent-cmd', agent, '--pause', '0', String(STORIES * 2)];
      const cpu = childCpuSeconds();
      const ms = await timed('bash', args, { cwd: repo });
      const cpuS = childCpuSeconds() - cpu;
      storiesDone(repo, ENV, workers > 1);
      return { ms, cpuS, runs: agentRuns(repo) };
    } finally {
      rmSync(repo, { recursive: true, force: true });
      rmSync(`${repo}.ralph-worktrees`, { recursive: true, force: true });
    }
  };
  const samples = { serial: [], parallel: [] };
  for (let i = 0; i < rounds; i++) {
    samples.serial.push(await run(1));
    samples.parallel.push(await run(WORKERS));
  }
  const times = (list) => stats(list.map((s) => s.ms));
  const runs = (list) => list.map((s) => s.runs).join(', ');
  const cpu = (list) =>
    Number.isNaN(list[0].cpuS) ? 'not measured' : `${stats(list.map((s) => s.cpuS)).median.toFixed(1)} s`;
  report(
    `\`ralph.sh --parallel ${WORKERS}\`, ${STORIES} independent stories, agent ${AGENT_MS / 1000} s per story`,
    times(samples.parallel),
    'the serial loop (`ralph.sh`, no --parallel)',
    times(samples.serial),
    `goal ≤ 0.35×, ideal 0.25×; median CPU of the runner and all it started (agents sleep): parallel ${cpu(samples.parallel)}, serial ${cpu(samples.serial)}; agent runs per loop: parallel ${runs(samples.parallel)}, serial ${runs(samples.serial)}; every story verified on ${PLAN_BRANCH}; ${rounds} runs each`,
  );
}

/**
 * Refuses a run that did not do what is measured: every story passes on the plan branch with its file there, and
 * each file says whether its agent was given the story (RALPH_STORY_ID) or picked it, so a build that ran
 * `--parallel` as one loop is reported as skipped instead of timed.
 */
function storiesDone(repo, env, parallel) {
  const show = (spec) => execFileSync('git', ['show', `${PLAN_BRANCH}:${spec}`], { cwd: repo, env, encoding: 'utf8' });
  const stories = JSON.parse(show('ralph/prd.json')).userStories;
  const open = stories.filter((s) => !s.passes).map((s) => s.id);
  if (open.length) throw new Error(`${open.join(', ')} not passing on ${PLAN_BRANCH} after the run`);
  const want = parallel ? 'assigned' : 'picked';
  for (const s of stories) {
    const text = show(`src/${s.id}.txt`).trim();
    if (text !== `${s.id} ${want}`)
      throw new Error(
        `src/${s.id}.txt on ${PLAN_BRANCH} says "${text}", not "${s.id} ${want}": this build does not run --parallel workers`,
      );
  }
}

/** Agent runs of the loop, from its state (iterations count agent runs over all workers). */
function agentRuns(repo) {
  const runs = path.join(repo, 'ralph/.runs');
  if (!existsSync(runs)) return '?';
  const states = readdirSync(runs)
    .map((d) => path.join(runs, d, 'state.json'))
    .filter((f) => existsSync(f));
  return states.map((f) => JSON.parse(readFileSync(f, 'utf8')).iteration).join('+');
}

/**
 * CPU seconds (user + system) of this process's waited-for children and their waited-for descendants, from
 * /proc/self/stat (cutime, cstime): read before and after one run, the difference is that run's CPU, git and the
 * agents included. On a shared machine of few cores it bounds what workers can gain. NaN where /proc is missing.
 */
let ticks;
function childCpuSeconds() {
  try {
    ticks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields after the command name start at field 3 (state); cutime and cstime are fields 16 and 17.
    return (Number(fields[16 - 3]) + Number(fields[17 - 3])) / ticks;
  } catch {
    return NaN;
  }
}
