// `ralphkit run|status|cancel` (the built CLI) and ./ralph/ralph.sh --help: the same engine behind both.
import { describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cliAsTyped, run, runCli } from '../support/repo.js';
import { agent, loopRepo, onlyState, ralph, startRalph, loopStates } from '../support/loop-repo.js';
import { RUN_FLAGS } from '../../src/engine/cli/args.js';
import { LOOP_EXIT } from '../../src/engine/errors.js';
import { until } from '../support/process.js';

describe('ralphkit run / status / cancel', () => {
  it('ralphkit run passes every argument to the engine and returns its exit code', async () => {
    const dir = loopRepo();
    const r = await runCli(['run', '--agent-cmd', agent('stuck'), '--pause', '0', '4'], { cwd: dir });
    expect(r.code, r.stderr).toBe(3);
    expect(onlyState(dir)).toMatchObject({ status: 'stuck', maxIterations: 4 });
  });

  it('ralphkit run refuses bad usage with exit 1, like ralph.sh', async () => {
    const dir = loopRepo();
    const viaCli = await runCli(['run', '--pause', 'later'], { cwd: dir });
    const viaSh = await ralph(dir, ['--pause', 'later']);
    expect([viaCli.code, viaSh.code]).toEqual([1, 1]);
    expect(viaCli.stderr).toMatch(/--pause: invalid duration "later"/);
    expect(viaSh.stderr).toMatch(/--pause: invalid duration "later"/);
  });

  it('ralphkit status lists a finished loop; --json gives the same data', async () => {
    const dir = loopRepo({ stories: 2 });
    expect((await ralph(dir, ['--agent-cmd', agent('worker'), '--pause', '0', '--name', 'nightly'])).code).toBe(0);
    const table = await runCli(['status'], { cwd: dir });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(
      /^ID\s+STATUS\s+ITER\s+AGENT\s+ALIVE\s+COST\s+STORIES\s+VERIFIED\s+REPORTED\s+UNVERIFIED\s+REJECTED$/m,
    );
    // An --agent-cmd agent reports no cost: n/a, not a measured $0.00.
    expect(table.stdout).toMatch(/^nightly\s+complete\s+2\/10\s+cmd: .*\s+no\s+n\/a\s+2\/2\s+2\s+0\s+0\s+0$/m);
    const json = await runCli(['status', '--json'], { cwd: dir });
    expect(JSON.parse(json.stdout).loops).toEqual([
      expect.objectContaining({ id: 'nightly', storiesPassed: 2, verified: 2 }),
    ]);
  });

  it('ralphkit cancel stops a live loop and its agent; the state says cancelled', async () => {
    const dir = loopRepo();
    const loop = startRalph(dir, [
      '--agent-cmd',
      agent('sleeper'),
      '--pause',
      '0',
      '--name',
      'long',
      '--iteration-timeout',
      '40s',
    ]);
    await until('the agent to start', () => loopStates(dir).some((s) => s.agentPid), 20_000);
    const c = await runCli(['cancel', 'long'], { cwd: dir });
    expect(c.code, c.stderr).toBe(0);
    expect(c.stderr).toMatch(/loop long cancelled/);
    const end = await loop.done;
    expect(end.code).toBe(130);
    expect(end.stderr).toMatch(
      /ralph: cancelled by ralphkit cancel; state saved \(exit 130\)\nralph: hint: continue with: \.\/ralph\/ralph\.sh --resume-last/,
    );
    expect(end.stderr).not.toMatch(/interrupted/);
    expect(onlyState(dir)).toMatchObject({ status: 'cancelled' });
    const again = await runCli(['cancel', 'long'], { cwd: dir });
    expect(again.stderr).toMatch(/not running \(cancelled\)/);
  });

  it('ralphkit cancel of an unknown loop is refused (exit 2)', async () => {
    const r = await runCli(['cancel', 'nope'], { cwd: loopRepo() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no loop named "nope"/);
  });
});

describe('ralph.sh --help', () => {
  it('documents every option, examples and every exit code', async () => {
    const dir = loopRepo();
    const r = await ralph(dir, ['--help']);
    expect(r.code).toBe(0);
    for (const flag of RUN_FLAGS()) expect(r.stdout).toContain(`--${flag}`);
    for (const code of Object.values(LOOP_EXIT)) expect(r.stdout).toMatch(new RegExp(`^  ${code}\\s{2,}\\S`, 'm'));
    expect(r.stdout).toMatch(/Examples:\n {2}\.\/ralph\/ralph\.sh /);
    // The same text, each naming the subcommands as it was started (ralphkit by the words that started it).
    const viaCli = await runCli(['run', '--help'], { cwd: dir });
    const viaEngine = await run(process.execPath, [path.join(dir, 'ralph/ralph.mjs'), 'run', '--help'], { cwd: dir });
    expect(r.stdout).toMatch(/^ {2}\.\/ralph\/ralph\.sh status {2,}list loops$/m);
    expect(viaEngine.stdout).toMatch(/^ {2}node ralph\/ralph\.mjs status {2,}list loops$/m);
    expect(viaCli.stdout).toContain(`  ${cliAsTyped()} status`);
    // Apart from the lines that name a command, the three are the same text.
    const rest = (text: string) =>
      text
        .split('\n')
        .filter(
          (l) =>
            !/ralph\.sh (validate|status|cancel|cleanup)|ralph\.mjs (validate|status|cancel|cleanup)|ralphkit(\.js)? (validate|status|cancel|cleanup|install)/.test(
              l,
            ),
        )
        .join('\n');
    expect(rest(viaEngine.stdout)).toBe(rest(r.stdout));
    expect(rest(viaCli.stdout)).toBe(rest(r.stdout));
  });

  it('the installed engine checks the plan and lists loops from the repository alone, its hints as the user typed it', async () => {
    const dir = loopRepo();
    const valid = await ralph(dir, ['validate']);
    expect(valid.code, valid.stderr).toBe(0);
    expect(valid.stdout).toMatch(/^ralph\/prd\.json: valid, 2 stories, 0 passing$/m);
    expect((await ralph(dir, ['status'])).code).toBe(0);
    writeFileSync(path.join(dir, 'ralph/prd.json'), '{ "branchName": "ralph/x", "userStories": [ }\n');
    const bad = await ralph(dir, ['validate']);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toMatch(/^ralph\/prd\.json:1:\d+: /m);
    expect(bad.stderr).toContain('ralph: hint: fix it, then run: ./ralph/ralph.sh validate ralph/prd.json');
    const viaNode = await run(process.execPath, [path.join(dir, 'ralph/ralph.mjs'), 'validate', '--json'], {
      cwd: dir,
    });
    expect(viaNode.code).toBe(2);
    expect(JSON.parse(viaNode.stdout)).toMatchObject({ file: 'ralph/prd.json', valid: false });
    expect(viaNode.stderr).toContain('then run: node ralph/ralph.mjs validate ralph/prd.json');
  });

  it("has the README's exit codes and the guide's, each code of the engine, and the same list of refusals", async () => {
    const r = await ralph(loopRepo(), ['--help']);
    const doc = (file: string, heading: string) => {
      const text = readFileSync(path.join(import.meta.dirname, '../..', file), 'utf8');
      const start = text.indexOf(`\n${heading}\n`);
      expect(start, `${file} has no "${heading}"`).toBeGreaterThan(-1);
      return text.slice(start, text.indexOf('\n## ', start + heading.length + 1));
    };
    const codes = (table: string) => [...table.matchAll(/^\| (\d+) \| /gm)].map((m) => Number(m[1]));
    // README's short table and docs/guide.md's full one (where README's long table moved) both list every code.
    const short = doc('README.md', '## Exit codes');
    const table = doc('docs/guide.md', '## Exit codes of the loop');
    expect(codes(short)).toEqual(Object.values(LOOP_EXIT));
    expect(codes(table)).toEqual(Object.values(LOOP_EXIT));
    // The same refusals, in the same order (the guide adds examples in parentheses and code formatting).
    const refusals = (text: string) =>
      text
        .replace(/\([^)]*\)/g, '')
        .replace(/[`]/g, '')
        .replace(/\s+/g, ' ')
        .replace(/^refused, nothing changed: /, '')
        .replace(/ ralphkit installed/, '')
        .split('; ')
        .map((x) => x.trim());
    const help = refusals(/^ {2}2 {4}([\s\S]*?)\n {2}3 /m.exec(r.stdout)![1]);
    expect(help.length).toBeGreaterThan(10);
    expect(refusals(/^\| 2 \| (.*) \|$/m.exec(table)![1])).toEqual(help);
  });

  it('names the environment it reads and where to read more', async () => {
    const r = await ralph(loopRepo(), ['--help']);
    const env = r.stdout.slice(r.stdout.indexOf('\nEnvironment:\n'));
    for (const name of ['CLAUDE', 'CODEX', 'AMP', 'OPENCODE', 'GEMINI']) expect(env).toContain(`RALPH_${name}_BIN`);
    expect(env).toMatch(/^ {2}RALPH_USAGE_URL {2,}\S/m);
    expect(env).toMatch(/^ {2}RALPH_USAGE_TOKEN {2,}\S/m);
    expect(r.stdout).toMatch(/^Docs: https:\/\/\S+/m);
    expect(r.stdout.indexOf('Exit codes:')).toBeLessThan(r.stdout.indexOf('\nEnvironment:\n'));
  });

  it('states the retry policy: transient failures and rate limits', async () => {
    const r = await ralph(loopRepo(), ['--help']);
    const retries = r.stdout.slice(r.stdout.indexOf('\nRetries'), r.stdout.indexOf('\nExamples:'));
    expect(retries).toMatch(/retried up to 3 times, waiting 10s, 20s, then 40s/);
    expect(retries).toMatch(
      /rate-limit or usage-limit message[\s\S]*waits until the reset it names[\s\S]*repeats the same iteration/,
    );
  });

  it("in a repository git refuses as not this user's, passes git's reason and safe.directory advice through", async () => {
    const dir = loopRepo();
    // git's own switch for its ownership check, so the test needs no second user account.
    const r = await ralph(dir, ['--agent-cmd', 'true', '1'], { GIT_TEST_ASSUME_DIFFERENT_OWNER: '1' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('detected dubious ownership in repository');
    expect(r.stderr).toContain(`git config --global --add safe.directory ${dir}`);
    expect(r.stderr).not.toContain('not a git repository');
  });
});
