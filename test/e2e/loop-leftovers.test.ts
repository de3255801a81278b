// What an agent leaves running in its process group must not outlive its iteration, even a process that
// ignores SIGTERM (SIGKILL follows the grace period, or the runner's exit, whichever comes first).
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { testdir } from '../support/repo.js';
import { loopRepo, onlyState, ralph } from '../support/loop-repo.js';
import { isAlive, until } from '../support/process.js';

// An agent that starts a background process ignoring SIGTERM (the ignore survives exec), then exits at once.
const STUBBORN = `(trap '' TERM; exec sleep 60) >/dev/null 2>&1 & echo $! >> "$LEFTOVER_PIDS"; echo started`;

describe.runIf(process.platform !== 'win32')('an agent that leaves a process behind', () => {
  it('the process is gone when the runner has exited, although it ignores SIGTERM', async () => {
    const dir = loopRepo({ stories: 1 });
    const pids = path.join(testdir(), 'pids');
    const r = await ralph(dir, ['--agent-cmd', STUBBORN, '--pause', '0', '1'], { LEFTOVER_PIDS: pids });
    expect(r.code, r.stderr).toBe(1);
    const [pid] = readFileSync(pids, 'utf8').trim().split('\n').map(Number);
    expect(pid).toBeGreaterThan(1);
    await until('the leftover process to be gone', () => !isAlive(pid), 5_000);
  });

  it('between iterations too: each one is killed after the grace period while the loop goes on', async () => {
    const dir = loopRepo({ stories: 1 });
    const pids = path.join(testdir(), 'pids');
    // In iteration 2 the agent records the process state of iteration 1's leftover (empty: gone; Z: killed, not yet
    // reaped by init). A 5 s pause keeps the runner alive past the 3 s grace, so the timer kills it, not the exit.
    const look = `[ "$(wc -l < "$LEFTOVER_PIDS")" -ge 2 ] && ps -o stat= -p "$(head -1 "$LEFTOVER_PIDS")" > "$LEFTOVER_PIDS.state"`;
    const r = await ralph(dir, ['--agent-cmd', `${STUBBORN}; ${look}; true`, '--pause', '5s', '2'], {
      LEFTOVER_PIDS: pids,
    });
    expect(r.code, r.stderr).toBe(1);
    expect(onlyState(dir)).toMatchObject({ iteration: 2 });
    expect(readFileSync(`${pids}.state`, 'utf8').trim()).toMatch(/^(Z.*)?$/);
  });
});
