// The installed runner when it cannot write its own files: an agent makes ralph/ read-only after committing a
// false claim. Root ignores file modes, so as root the runner is started as `nobody` on a repository it owns.
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { asNobodyOptions, handOver, nobodyRoot } from '../support/nobody.js';
import { run, testdir } from '../support/repo.js';
import { loopRepo } from '../support/loop-repo.js';
import { parseLedger } from '../../src/engine/store/ledger.js';

/** An agent that claims US-001 without the work, commits, then (the first time only) makes ralph/ read-only. */
function writeLockingAgent(dir: string): string {
  const file = path.join(dir, 'locker.mjs');
  const marker = path.join(dir, 'locked-once');
  writeFileSync(
    file,
    [
      `import { chmodSync, existsSync, writeFileSync } from 'node:fs';`,
      `import { readPrd, writePrd, commitAll, drainStdin } from ${JSON.stringify(path.join(nobodyRoot(), 'test/fixtures/verify/prd-edit.mjs'))};`,
      `drainStdin(); const prd = readPrd(); prd.userStories[0].passes = true; writePrd(prd); commitAll('feat: US-001 (not really)');`,
      `if (!existsSync(${JSON.stringify(marker)})) { writeFileSync(${JSON.stringify(marker)}, ''); chmodSync('ralph/prd.json', 0o444); chmodSync('ralph', 0o555); }`,
      `console.log('done');`,
    ].join('\n'),
  );
  return file;
}

function ralph(dir: string, home: string, args: string[]) {
  return run(path.join(dir, 'ralph/ralph.sh'), args, { cwd: dir, env: { HOME: home }, ...asNobodyOptions() });
}

describe('the runner cannot write its files', () => {
  it('read-only ralph/: a clear error naming prd.json (exit 1, state failed), the false claim never recorded as verified', async () => {
    const dir = loopRepo({ stories: 2, checks: ['test -f work/US-001.txt'] });
    const agentDir = testdir();
    const agentFile = writeLockingAgent(agentDir);
    handOver(dir, agentDir);
    onTestFinished(() => chmodSync(path.join(dir, 'ralph'), 0o755)); // so the temp folder can be removed
    const args = ['--agent-cmd', `node ${JSON.stringify(agentFile)}`, '--pause', '0', '--name', 'ro', '1'];

    const r = await ralph(dir, agentDir, args);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(
      'ralph: could not write ralph/prd.json (EACCES: permission denied): US-001 was rejected (see the ledger) but the plan could not be updated and still says passes: true (exit 1)',
    );
    expect(r.stderr).toContain(
      'ralph: hint: make ralph/prd.json and its folder writable for this user (e.g. chmod u+w ralph ralph/prd.json), then continue with: ./ralph/ralph.sh --resume-last',
    );
    expect(r.stderr).not.toMatch(/unexpected error|\n\s+at /);
    const runDir = path.join(dir, 'ralph/.runs/ro');
    expect(JSON.parse(readFileSync(path.join(runDir, 'state.json'), 'utf8'))).toMatchObject({
      status: 'failed',
      exitCode: 1,
      iterationDone: false,
    });
    const verdicts = () =>
      parseLedger(readFileSync(path.join(runDir, 'ledger.jsonl'), 'utf8')).flatMap((l) =>
        l.kind === 'verdict' && !l.gate ? [`${l.iteration}:${l.story}:${l.status}`] : [],
      );
    expect(verdicts()).toEqual(['1:US-001:rejected']);
    // The next agent still reads why: the note went to progress.txt before the plan write failed.
    expect(readFileSync(path.join(dir, 'ralph/progress.txt'), 'utf8')).toContain(
      'ralph: US-001 rejected (iteration 1)',
    );

    // Fixed permissions and --resume-last: the same iteration is judged again and the plan finally says false.
    chmodSync(path.join(dir, 'ralph'), 0o755);
    chmodSync(path.join(dir, 'ralph/prd.json'), 0o644);
    const resumed = await ralph(dir, agentDir, ['--resume-last']);
    expect(resumed.code, resumed.stderr).toBe(1); // max iterations (1), stories still open
    expect(JSON.parse(readFileSync(path.join(dir, 'ralph/prd.json'), 'utf8')).userStories[0]).toMatchObject({
      passes: false,
      notes: expect.stringMatching(/^\[ralph\] rejected: check `test -f work\/US-001.txt` exited 1/),
    });
    expect(verdicts()).toEqual(['1:US-001:rejected', '1:US-001:rejected']);
  });
});
