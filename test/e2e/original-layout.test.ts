// A repository laid out for the original Ralph loop (scripts/ralph/prd.json, progress.txt, prompt.md) runs under the
// installed runner unchanged (SPEC §13): without --prd, the runner takes scripts/ralph/prd.json when ralph/prd.json is
// absent or still the installed example, says so, and keeps the log beside the plan. Needs `npm run build` first.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { installedRepo } from '../support/installed-repo.js';
import { FIXTURES, git, run, type RunResult } from '../support/repo.js';
import type { Prd } from '../../src/prd/types.js';
import { planText, story } from '../support/plan.js';

const PLAN: Prd = {
  project: 'Old',
  branchName: 'ralph/old-layout',
  userStories: ['US-1', 'US-2'].map((id, i) =>
    story(id, { acceptanceCriteria: ['done'], priority: i + 1, checks: [`grep -q "${id} done" ${id}.txt`] }),
  ),
};
const ORIGINAL = {
  'scripts/ralph/prd.json': planText(PLAN),
  'scripts/ralph/progress.txt': '# Ralph Progress Log\n',
  'scripts/ralph/prompt.md': '# the original prompt\n',
};

function ralph(dir: string, args: string[]): Promise<RunResult> {
  const agentCmd = `node ${JSON.stringify(path.join(FIXTURES, 'verify', 'honest.mjs'))}`;
  return run(
    path.join(dir, 'ralph/ralph.sh'),
    ['--agent-cmd', agentCmd, '--pause', '0', '--iteration-timeout', '30s', '--name', 'e2e', ...args],
    { cwd: dir },
  );
}

const read = (dir: string, rel: string) => readFileSync(path.join(dir, rel), 'utf8');

describe('the original Ralph layout', () => {
  it('install beside scripts/ralph/: the loop runs scripts/ralph/prd.json, not the example, and exits 0', async () => {
    const dir = installedRepo({ skills: false, files: ORIGINAL });
    const example = read(dir, 'ralph/prd.json');
    const r = await ralph(dir, ['4']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      'using scripts/ralph/prd.json (the original Ralph layout): ralph/prd.json is still the example install wrote',
    );
    expect((JSON.parse(read(dir, 'scripts/ralph/prd.json')) as Prd).userStories.map((s) => s.passes)).toEqual([
      true,
      true,
    ]);
    expect(read(dir, 'ralph/prd.json')).toBe(example);
    expect(read(dir, 'scripts/ralph/progress.txt')).toMatch(/^# Ralph Progress Log\n/);
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it('with no ralph/prd.json at all, and never when --prd names the plan', async () => {
    const dir = installedRepo({ skills: false, files: ORIGINAL });
    git(dir, 'rm', '-q', 'ralph/prd.json');
    git(dir, 'commit', '-q', '-m', 'drop the example');
    const dry = await ralph(dir, ['--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toContain(
      'using scripts/ralph/prd.json (the original Ralph layout): there is no ralph/prd.json',
    );
    expect(dry.stdout + dry.stderr).toMatch(/plan \/ prompt: +scripts\/ralph\/prd\.json \/ ralph\/prompt\.md/);
    const named = await ralph(dir, ['--dry-run', '--prd', 'ralph/prd.json']);
    expect(named.code).toBe(2);
    expect(named.stderr).toContain('cannot read the plan ralph/prd.json');
    expect(named.stderr).not.toContain('original Ralph layout');
  });
});
