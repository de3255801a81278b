// The last save of a loop (finish() in run.ts) failing after every story passed: the run still exits 0 with its
// loop id and status, and says that state.json is not recorded. Root ignores file modes, so the failure is
// injected at the one atomic writer, for state.json saves that record an end (status other than running) only.
import { describe, expect, it, vi } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { jsonEvents, renderPlan } from '../../../support/loop-repo.js';
import { WORKER, engine, planRepo } from '../../../support/lifecycle.js';

const fault = vi.hoisted(() => ({ on: false, hits: 0 }));

vi.mock('../../../../src/util/atomic.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../../src/util/atomic.js')>();
  return {
    ...real,
    atomicWriteFileSync(file: string, data: string | Uint8Array, mode?: number) {
      const ending = path.basename(file) === 'state.json' && !String(data).includes('"status": "running"');
      if (fault.on && ending) {
        fault.hits++;
        throw Object.assign(new Error(`EACCES: permission denied, open '${file}.tmp'`), { code: 'EACCES' });
      }
      real.atomicWriteFileSync(file, data, mode);
    },
  };
});

describe('finish() when state.json cannot be saved', () => {
  it('a complete loop still exits 0, and its exit event names the loop, its status and the lost state.json', async () => {
    const dir = planRepo(renderPlan({ stories: 2 }));
    fault.on = true;
    fault.hits = 0;
    const r = await engine(dir, ['run', ...WORKER, '--name', 'fin', '--json']).finally(() => (fault.on = false));

    expect(fault.hits).toBe(1);
    expect(r.code, r.stderr).toBe(0);
    const exit = jsonEvents(r.stdout).at(-1);
    expect(exit).toMatchObject({ type: 'exit', loop: 'fin', code: 0, status: 'complete', iteration: 2 });
    expect(exit?.stateError).toBe(
      'could not write ralph/.runs/fin/state.json (EACCES: permission denied): the loop state could not be saved, so how the loop ended (complete, exit 0) is not recorded',
    );
    expect(exit?.hint).toMatch(
      /^make ralph\/\.runs\/fin\/ a folder this user can write \(chmod u\+w ralph\/\.runs\/fin\)/,
    );
    expect(r.stderr).toMatch(
      /\nralph: error: could not write ralph\/\.runs\/fin\/state\.json \(EACCES: permission denied\)/,
    );
    expect(r.stderr).not.toMatch(/unexpected error|\n\s+at /);
    // The end never reached the disk: the last record is the running one.
    expect(JSON.parse(readFileSync(path.join(dir, 'ralph/.runs/fin/state.json'), 'utf8'))).toMatchObject({
      status: 'running',
      iteration: 2,
    });
    expect(
      JSON.parse(readFileSync(path.join(dir, 'ralph/prd.json'), 'utf8')).userStories.every(
        (s: { passes: boolean }) => s.passes,
      ),
    ).toBe(true);
  });

  it('without the fault the same run records complete (the injection is what fails it)', async () => {
    const dir = planRepo(renderPlan({ stories: 2 }));
    const r = await engine(dir, ['run', ...WORKER, '--name', 'fin', '--json']);
    expect(r.code).toBe(0);
    expect(jsonEvents(r.stdout).at(-1)).not.toHaveProperty('stateError');
    expect(JSON.parse(readFileSync(path.join(dir, 'ralph/.runs/fin/state.json'), 'utf8'))).toMatchObject({
      status: 'complete',
      exitCode: 0,
    });
  });
});
