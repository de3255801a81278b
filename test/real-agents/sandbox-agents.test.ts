// The real Claude Code and Codex CLIs under the default sandbox (no --sandbox typed: on where bubblewrap works), each
// against its scripted model server on 127.0.0.1, which the sandbox must reach (no --unshare-net by default). Where
// the CLI is installed decides what the sandbox shows of it: under HOME (bound into the sandbox) and outside it (the
// CI cache folder, read-only like /usr/local) the honest loop ends verified; under /tmp (a private tmpfs inside) the
// start is refused before iteration 1 (exit 2) instead of three iterations of "not found". One repository template
// for the whole file (installedRepo), a one-story plan, one loop per CLI and place.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { installedRepo } from '../support/installed-repo.js';
import { git, run, testdir } from '../support/repo.js';
import { ralphWorker, renderStoryCommand, type PlanStory } from '../support/model-scenarios.js';
import { CLAUDE_BIN, SKIP_CLAUDE, claudeEnv, requireClaude } from '../support/model-claude.js';
import { CODEX_BIN, SKIP_CODEX, codexEnv, requireCodex } from '../support/model-codex.js';
import { startResponsesServer, type ResponsesScenario } from '../support/responses-server.js';
import { TWO_STORY_PLAN, honestWork, readLedger, readState, serve } from '../support/model-loop.js';
import { probeSandbox } from '../../src/engine/agents/sandbox.js';

const probe = probeSandbox(process.env);
const PLAN = { ...TWO_STORY_PLAN, userStories: TWO_STORY_PLAN.userStories.slice(0, 1) };

type Place = 'home' | 'system' | 'tmp';

/**
 * The folder to put first on PATH for a CLI installed at `place`. `bin` is the cache install's
 * node_modules/.bin/<name> (a relative link into its package). home: the install's node_modules hard-linked into
 * HOME/.local/lib (no 400 MB copy; the files are then HOME's); system: the cache folder itself, outside the test's
 * HOME, seen read-only in the sandbox as /usr/local would be; tmp: a link in a folder of /tmp.
 */
function placeCli(bin: string, home: string, place: Place): string {
  if (place === 'system') return path.dirname(bin);
  if (place === 'tmp') {
    const dir = testdir('ralphkit-cli-bin-', '/tmp');
    symlinkSync(bin, path.join(dir, path.basename(bin)));
    return dir;
  }
  const modules = path.dirname(path.dirname(bin));
  const into = path.join(home, '.local/lib', path.basename(path.dirname(modules)));
  mkdirSync(into, { recursive: true });
  try {
    execFileSync('cp', ['-al', modules, into]);
  } catch {
    execFileSync('cp', ['-a', modules, into]); // another file system than the cache: a real copy
  }
  return path.join(into, 'node_modules/.bin');
}

/** The honest Codex model: its one story's work, checks and commit in one shell call, then COMPLETE when none is open. */
const codexHonest: ResponsesScenario = (ctx) => {
  const plan = JSON.parse(readFileSync(path.join(ctx.repo!, 'ralph/prd.json'), 'utf8')) as {
    checks?: string[];
    userStories: PlanStory[];
  };
  const open = plan.userStories.filter((s) => !s.passes);
  if (ctx.turn === 0 && open.length)
    return { items: [{ type: 'exec', cmd: renderStoryCommand(plan, open[0], honestWork(open[0]), 'ralph/prd.json') }] };
  return { items: [{ type: 'message', text: `Done.${open.length ? '' : '\n<promise>COMPLETE</promise>'}` }] };
};

/** The environment for one CLI at `place`: its login to the scripted server in HOME (CODEX_HOME too), PATH to it. */
async function cliLoop(
  agent: 'claude' | 'codex',
  place: Place,
  repo: string,
): Promise<{ env: NodeJS.ProcessEnv; errors: Error[]; requests: () => number }> {
  if (agent === 'claude') {
    const server = await serve(ralphWorker({ decide: honestWork }), repo);
    const env = claudeEnv(server);
    return {
      env: { ...env, PATH: `${placeCli(CLAUDE_BIN, env.HOME!, place)}${path.delimiter}${process.env.PATH}` },
      errors: server.errors,
      requests: () => server.mainRequests().length,
    };
  }
  const server = await startResponsesServer({ scenario: codexHonest, repo });
  onTestFinished(() => server.close());
  const base = codexEnv(server);
  // Codex keeps its configuration and sessions in CODEX_HOME: under HOME, where users have it (~/.codex) and the
  // sandbox shows it (a CODEX_HOME of its own under /tmp would be refused at start).
  const codexHome = path.join(base.HOME!, '.codex');
  mkdirSync(codexHome);
  writeFileSync(path.join(codexHome, 'config.toml'), readFileSync(path.join(base.CODEX_HOME!, 'config.toml')));
  return {
    env: {
      ...base,
      CODEX_HOME: codexHome,
      PATH: `${placeCli(CODEX_BIN, base.HOME!, place)}${path.delimiter}${process.env.PATH}`,
    },
    errors: server.errors,
    requests: () => server.mainRequests().length,
  };
}

function ralph(repo: string, agent: string, env: NodeJS.ProcessEnv) {
  return run(path.join(repo, 'ralph/ralph.sh'), ['--agent', agent, '--pause', '0', '--iteration-timeout', '60s', '3'], {
    cwd: repo,
    env,
    timeoutMs: 120_000,
    sandboxDefault: true,
  });
}

/** Files and folders directly in `home` (and one level into dot-folders), what the CLI left there. */
function homeEntries(home: string): string[] {
  return readdirSync(home, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() && e.name !== '.local'
        ? [`${e.name}/`, ...readdirSync(path.join(home, e.name)).map((n) => `${e.name}/${n}`)]
        : [e.name],
    )
    .sort();
}

describe.skipIf(!probe.ok || SKIP_CLAUDE || SKIP_CODEX)(
  `the real Claude Code and Codex CLIs under the default sandbox${probe.ok ? '' : ` (skipped: ${probe.message})`}`,
  () => {
    for (const agent of ['claude', 'codex'] as const) {
      for (const place of ['home', 'system'] as const) {
        it(`${agent} installed ${place === 'home' ? 'in HOME' : 'outside HOME (a system path)'}: sandboxed, reaches its model on 127.0.0.1, exit 0 with the story verified`, {
          timeout: 150_000,
        }, async () => {
          requireClaude();
          requireCodex();
          const repo = installedRepo({ skills: false, plan: PLAN });
          const loop = await cliLoop(agent, place, repo);
          const claudeBefore = homeEntries(loop.env.HOME!).filter((e) => e.startsWith('.claude'));
          const r = await ralph(repo, agent, loop.env);
          expect(loop.errors).toEqual([]);
          expect(r.code, r.stderr).toBe(0);
          expect(r.stderr).not.toContain('not sandboxed');
          expect(readState(repo).options.sandbox).toBe(true);
          const feat = git(repo, 'log', '-1', '--format=%H', '--grep=^feat: US-001');
          expect(
            readLedger(repo)
              .filter((l) => l.kind === 'verdict' && !l.gate)
              .map((v) => [v.story, v.status, v.commit]),
          ).toEqual([['US-001', 'verified', feat]]);
          // What the CLI keeps in HOME (docs/agents.md) it wrote into its private layer: none of it reached the real HOME.
          const home = loop.env.HOME!;
          if (agent === 'claude')
            expect(homeEntries(home).filter((e) => e.startsWith('.claude'))).toEqual(claudeBefore);
          else expect(readdirSync(path.join(home, '.codex'))).toEqual(['config.toml']);
        });
      }
    }

    it('both installed under /tmp (outside the repository and HOME): refused before iteration 1, exit 2, with what to type; no request reached a model', {
      timeout: 60_000,
    }, async () => {
      requireClaude();
      requireCodex();
      const repo = installedRepo({ skills: false, plan: PLAN });
      for (const agent of ['claude', 'codex'] as const) {
        const loop = await cliLoop(agent, 'tmp', repo);
        const r = await ralph(repo, agent, loop.env);
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toMatch(
          new RegExp(
            `the sandbox cannot see the agent \\(${agent}\\): /tmp/ralphkit-cli-bin-\\w+/${agent} is under /tmp`,
          ),
        );
        expect(r.stderr).toContain('; or run with --no-sandbox');
        expect(existsSync(path.join(repo, 'ralph/.runs'))).toBe(false);
        expect(loop.requests()).toBe(0);
      }
    });
  },
);
