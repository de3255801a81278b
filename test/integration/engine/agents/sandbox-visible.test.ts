// Whether the sandbox can see the agent's program (agents/sandbox-visible.ts), on real files and links, and checked
// against what the real bwrap shows: a program under /tmp (outside the repository and HOME) is not there inside.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { planSandboxCommand, probeSandbox } from '../../../../src/engine/agents/sandbox.js';
import { findUnseen, isSeen, refuseUnseenAgent, sandboxView } from '../../../../src/engine/agents/sandbox-visible.js';
import { DEFAULT_OPTIONS } from '../../../../src/engine/cli/args.js';
import { LoopExit } from '../../../../src/engine/errors.js';
import { gitdir, testdir, writeFiles } from '../../../support/repo.js';

const probe = probeSandbox(process.env);

/** An executable file `name` in `dir` with `text`. */
function program(dir: string, name: string, text: string): string {
  writeFiles(dir, { [name]: text });
  const file = path.join(dir, name);
  chmodSync(file, 0o755);
  return file;
}

// testdir() is under /tmp: a folder of its own there is what the sandbox replaces; the repository and HOME are bound.
function setup() {
  const repo = gitdir();
  const home = testdir('ralphkit-home-');
  const elsewhere = testdir('ralphkit-bin-', '/tmp');
  const env = { PATH: `${elsewhere}:/usr/bin:/bin`, HOME: home };
  return { repo, home, elsewhere, env, view: sandboxView(repo, path.join(repo, '.git'), env) };
}

describe("the sandbox view of the agent's program", () => {
  it('sees the system, HOME and the repository; not the rest of /tmp', () => {
    const { repo, home, elsewhere, view } = setup();
    for (const p of ['/usr/bin/env', '/bin/sh', path.join(home, '.local/bin/claude'), path.join(repo, 'agent.sh')])
      expect(isSeen(p, view), p).toBe(true);
    for (const p of [path.join(elsewhere, 'claude'), '/tmp/claude', '/dev/shm/claude'])
      expect(isSeen(p, view), p).toBe(false);
  });

  it.runIf(probe.ok)(
    'agrees with the real bwrap: a program outside the bound folders under /tmp is not there, one in HOME is',
    () => {
      if (!probe.ok) return;
      const { repo, home, elsewhere, view } = setup();
      const outside = program(elsewhere, 'agent', '#!/bin/sh\necho hi\n');
      const inHome = program(home, 'agent', '#!/bin/sh\necho hi\n');
      const plan = planSandboxCommand({
        bwrap: probe.bwrap,
        file: 'sh',
        args: ['-c', `test -x ${outside}; echo $?; test -x ${inHome}; echo $?`],
        repoRoot: repo,
        gitDir: path.join(repo, '.git'),
        readOnly: [],
        scratch: [],
        network: true,
        home,
      });
      const r = spawnSync(plan.file, plan.args, { encoding: 'utf8' });
      expect(r.stdout).toBe('1\n0\n');
      expect([isSeen(outside, view), isSeen(inHome, view)]).toEqual([false, true]);
    },
  );

  it('follows a symlink chain, the #! interpreter and `#!/usr/bin/env <name>` on PATH', () => {
    const { home, elsewhere, env, view } = setup();
    const hidden = program(elsewhere, 'real-agent', '#!/bin/sh\n');
    // A link in HOME (seen) to a program under /tmp (not seen).
    mkdirSync(path.join(home, 'bin'));
    symlinkSync(hidden, path.join(home, 'bin/linked'));
    expect(findUnseen(path.join(home, 'bin/linked'), view, env)).toEqual({
      path: hidden,
      via: path.join(home, 'bin/linked'),
    });
    // A script in HOME whose interpreter is under /tmp.
    const interp = program(elsewhere, 'interp', '#!/bin/sh\n');
    const script = program(home, 'by-interp', `#!${interp} --flag\n`);
    expect(findUnseen(script, view, env)).toEqual({ path: interp, via: `the #! line of ${script}` });
    // `#!/usr/bin/env -S fakenode --x`: fakenode as PATH finds it (under /tmp here).
    const fakenode = program(elsewhere, 'fakenode', '#!/bin/sh\n');
    const viaEnv = program(home, 'by-env', '#!/usr/bin/env -S fakenode --x\n');
    expect(findUnseen(viaEnv, view, env)).toEqual({ path: fakenode, via: `the #! line of ${viaEnv}` });
    // All seen: a script in HOME run by /bin/sh, a native binary.
    expect(findUnseen(program(home, 'ok', '#!/bin/sh\n'), view, env)).toBeNull();
    expect(findUnseen('/bin/sh', view, env)).toBeNull();
  });

  it('refuses the start (exit 2) for a named agent or an --agent-cmd program under /tmp, with the way out', () => {
    const { repo, elsewhere, env } = setup();
    const fake = program(elsewhere, 'claude', '#!/bin/sh\n');
    const at = { repoRoot: repo, gitDir: path.join(repo, '.git'), env };
    const named = (() => {
      try {
        refuseUnseenAgent(DEFAULT_OPTIONS, at);
      } catch (err) {
        return err;
      }
    })() as LoopExit;
    expect(named).toBeInstanceOf(LoopExit);
    expect(named).toMatchObject({
      code: 2,
      message: `the sandbox cannot see the agent (claude): ${fake} is under /tmp, which the sandbox replaces with its own`,
    });
    expect(named.hint).toMatch(
      /npm install -g @anthropic-ai\/claude-code.*RALPH_CLAUDE_BIN.*; or run with --no-sandbox$/,
    );
    const cmd = (() => {
      try {
        refuseUnseenAgent({ ...DEFAULT_OPTIONS, agentCmd: 'claude -p' }, at);
      } catch (err) {
        return err;
      }
    })() as LoopExit;
    expect(cmd).toMatchObject({
      code: 2,
      message: expect.stringContaining("the sandbox cannot see --agent-cmd's program"),
    });
    // A CODEX_HOME under /tmp: Codex would start without its login inside.
    const codexHome = testdir('ralphkit-codex-home-', '/tmp');
    const noLogin = (() => {
      try {
        refuseUnseenAgent(
          { ...DEFAULT_OPTIONS, agent: 'codex' },
          { ...at, env: { ...env, PATH: '/usr/bin:/bin', CODEX_HOME: codexHome } },
        );
      } catch (err) {
        return err;
      }
    })() as LoopExit;
    expect(noLogin).toMatchObject({
      code: 2,
      message: `the sandbox cannot see CODEX_HOME (${codexHome}): it is under /tmp, which the sandbox replaces with its own, so codex would start without its login`,
    });
    // The same program in the repository is seen: no refusal.
    program(repo, 'agent.sh', '#!/bin/sh\n');
    expect(() => refuseUnseenAgent({ ...DEFAULT_OPTIONS, agentCmd: './agent.sh' }, at)).not.toThrow();
  });
});
