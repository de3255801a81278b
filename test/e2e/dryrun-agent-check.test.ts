// --dry-run checks the agent the run would start (the real start's lookup): it warns, and still exits 0.
import { describe, expect, it } from 'vitest';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { run, writeFiles } from '../support/repo.js';
import { agent, loopRepo, ralph } from '../support/loop-repo.js';

describe('--dry-run agent check', () => {
  it('warns that the first word of an --agent-cmd is not on PATH', async () => {
    const dir = loopRepo();
    const r = await ralph(dir, ['--dry-run', '--agent-cmd', 'my-agnet --yes']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^would run: +\/bin\/sh -c 'my-agnet --yes'/m);
    expect(r.stdout).toMatch(/^agent found: +WARNING: "my-agnet" is not an executable on PATH/m);
    expect(r.stdout).toMatch(/hint: check the spelling of --agent-cmd/);
  });

  it('names where an --agent-cmd program was found, relative paths from the repository root', async () => {
    const dir = loopRepo();
    const onPath = await ralph(dir, ['--dry-run', '--agent-cmd', 'node ./agent.mjs']);
    expect(onPath.stdout).toMatch(/^agent found: +\/\S*\/node$/m);
    const script = await ralph(dir, ['--dry-run', '--agent-cmd', agent('worker')]);
    expect(script.stdout).toContain(`agent found:      ${agent('worker')}`);
    const missing = await ralph(dir, ['--dry-run', '--agent-cmd', './bin/agent --fast']);
    expect(missing.stdout).toMatch(/WARNING: "\.\/bin\/agent" is not an executable file \(from the repository root\)/);
    // Asked from a subfolder, ./bin/agent is still the repository's, where the agent will run.
    writeFiles(dir, { 'bin/agent': '#!/bin/sh\n' });
    mkdirSync(path.join(dir, 'sub'));
    const fromSub = await run(
      'sh',
      ['-c', 'chmod +x ../bin/agent && ../ralph/ralph.sh --dry-run --agent-cmd "./bin/agent --fast"'],
      { cwd: path.join(dir, 'sub') },
    );
    expect(fromSub.stdout, fromSub.stderr).toContain(`agent found:      ${path.join(dir, 'bin/agent')}`);
  });

  it('does not guess about commands that start with a shell construct', async () => {
    const dir = loopRepo();
    const r = await ralph(dir, ['--dry-run', '--agent-cmd', 'FOO=1 my-agent']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^agent found: +not checked \(the command starts with a shell construct/m);
    expect(r.stdout).not.toMatch(/WARNING/);
    const builtin = await ralph(dir, ['--dry-run', '--agent-cmd', 'cd sub && my-agent']);
    expect(builtin.stdout).toMatch(/^agent found: +not checked \("cd" is a shell built-in\)$/m);
  });

  it('warns when a named agent is not found, as the real start would refuse it', async () => {
    const dir = loopRepo();
    const r = await ralph(dir, ['--dry-run'], { RALPH_CLAUDE_BIN: '/nonexistent/claude' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /WARNING: the claude CLI was not found: RALPH_CLAUDE_BIN is set to "\/nonexistent\/claude".*refuse to start \(exit 2\)/,
    );
    const real = await ralph(dir, ['--pause', '0'], { RALPH_CLAUDE_BIN: '/nonexistent/claude' });
    expect(real.code).toBe(2);
    const found = await ralph(dir, ['--dry-run'], { RALPH_CLAUDE_BIN: process.execPath });
    expect(found.stdout).toContain(`agent found:      ${process.execPath}`);
  });

  it('--json carries the check as agentCheck', async () => {
    const dir = loopRepo();
    const r = await ralph(dir, ['--dry-run', '--json', '--agent-cmd', 'my-agnet']);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({
      type: 'dry-run',
      agentCheck: { found: null, warning: expect.stringContaining('my-agnet') },
    });
  });
});
