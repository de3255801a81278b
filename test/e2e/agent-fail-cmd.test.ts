// A failing agent, seen from the terminal: a command the shell cannot find ends the loop at once, and every
// other failure shows the tail of what the agent printed and where its log is.
import { describe, expect, it } from 'vitest';
import { agent, loopRepo, onlyState, ralph } from '../support/loop-repo.js';

// Back-offs in milliseconds, so a retried failure does not cost 70 s of the test.
const FAST = { RALPH_RETRY_MS: '1' };

describe('an --agent-cmd that cannot run', () => {
  it('ends the loop in iteration 1 with exit 2, quoting the shell, the command and a --dry-run hint; no retries', async () => {
    const dir = loopRepo();
    const r = await ralph(dir, ['--pause', '0', '--agent-cmd', 'my-agnet --yes', '3'], FAST);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/the shell said "(\/bin\/)?sh: .*my-agnet: (command )?not found"/);
    expect(r.stderr).toMatch(/command: my-agnet --yes; log: ralph\/\.runs\/[^/]+\/iteration-1\.log/);
    expect(r.stderr).toMatch(/hint: .*--dry-run --agent-cmd 'my-agnet --yes'/);
    expect(r.stderr).not.toMatch(/retry|iteration 2/);
    expect(onlyState(dir)).toMatchObject({ status: 'refused', exitCode: 2, iteration: 1 });
  });

  it('ends with exit 1 when an earlier iteration already ran the agent', async () => {
    const dir = loopRepo({ stories: 3 });
    // Iteration 1 does a story; from iteration 2 on, the command names a program that does not exist.
    const cmd = `if [ "$RALPH_ITERATION" = 1 ]; then ${agent('worker')}; else no-such-agent-xyz; fi`;
    const r = await ralph(dir, ['--pause', '0', '--agent-cmd', cmd, '3'], FAST);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(
      /could not run in iteration 2: the shell said "(\/bin\/)?sh: .*no-such-agent-xyz: (command )?not found"/,
    );
    expect(r.stderr).not.toMatch(/retry/);
    // A failure, not a max-iterations stop, although both exit 1.
    expect(onlyState(dir)).toMatchObject({ status: 'failed', exitCode: 1, iteration: 2 });
  });

  it('a file that is not executable (exit 126) ends the loop the same way', async () => {
    const dir = loopRepo();
    const r = await ralph(dir, ['--pause', '0', '--agent-cmd', './ralph/prompt.md', '2'], FAST);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/the shell said "(\/bin\/)?sh: .*\.\/ralph\/prompt\.md: Permission denied"/);
  });
});

describe('an agent that fails', () => {
  it('shows the last lines of its stderr and the log path on every attempt, and no $0 cost', async () => {
    const dir = loopRepo();
    const r = await ralph(dir, ['--pause', '0', '--agent-cmd', agent('fail-stderr'), '1'], FAST);
    expect(r.code, r.stderr).toBe(1);
    const tails = r.stderr.match(
      /the agent failed \(exit 3\); last lines of its stderr \(full log: ralph\/\.runs\/[^/]+\/iteration-1\.log\):/g,
    );
    expect(tails).toHaveLength(4);
    expect(r.stderr).toMatch(/^ {2}· {3}agent error line 7$/m);
    expect(r.stderr).toMatch(/^ {2}· {3}agent error line 3$/m);
    expect(r.stderr).not.toMatch(/agent error line 2$/m);
    expect(r.stderr).toMatch(/the agent exited 3 without a final message; retry 1 of iteration 1/);
    expect(r.stderr).not.toMatch(/with no output/);
    expect(r.stderr).toMatch(/iteration 1 done · no new commit \(1 in a row\)$/m);
    expect(r.stderr).not.toMatch(/cost so far/);
  });

  it('an agent command whose script fails on a missing tool of its own is retried, not ended', async () => {
    const dir = loopRepo();
    // The script itself runs (the shell found it); the 127 comes from inside it, named by the script, not by "sh".
    const r = await ralph(
      dir,
      ['--pause', '0', '--agent-cmd', 'cat >/dev/null; bash -c "missing-tool-xyz"', '1'],
      FAST,
    );
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/retry 3 of iteration 1/);
    expect(r.stderr).toMatch(/bash: .*missing-tool-xyz: command not found/);
  });
});
