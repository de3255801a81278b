// The refusal of a dirty tree at start says what to do with untracked files: they may be output a check or a
// build writes, which belongs in .gitignore; when the runner itself saw the checks write them (it warned then),
// the hint says exactly that. Needs `npm run build` first (npm test does it).
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { installedRepo } from '../support/installed-repo.js';
import { FIXTURES, run, writeFiles, type RunResult } from '../support/repo.js';
import { plan, planText, story } from '../support/plan.js';

async function installed(checks: string[]): Promise<string> {
  const stories = ['US-1', 'US-2'].map((id, i) =>
    story(id, { acceptanceCriteria: ['done'], priority: i + 1, notes: '' }),
  );
  const dir = installedRepo({
    skills: false,
    plan: planText(plan(stories, { project: 'Demo', branchName: 'ralph/demo', checks })),
    message: 'chore: install ralphkit',
  });
  return dir;
}

function ralph(dir: string, ...args: string[]): Promise<RunResult> {
  const agentCmd = `node ${JSON.stringify(path.join(FIXTURES, 'verify', 'honest.mjs'))}`;
  return run(path.join(dir, 'ralph/ralph.sh'), ['--agent-cmd', agentCmd, '--pause', '0', ...args], { cwd: dir });
}

describe('the dirty-tree refusal and .gitignore', () => {
  it('an untracked file: the hint offers .gitignore in case a check or build writes it', async () => {
    const dir = await installed(['true']);
    writeFiles(dir, { 'build/out.js': 'x\n' });
    const r = await ralph(dir, '1');
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('if a check or build writes build/out.js, list it in .gitignore instead');
  });

  it('files the checks of the last loop wrote (--verify-in-place): the runner warned then, and the next start names them for .gitignore', async () => {
    const dir = await installed(['mkdir -p coverage && echo 1 > coverage/run.txt']);
    const first = await ralph(dir, '--name', 'first', '--verify-in-place', '1');
    expect(first.code, first.stderr).toBe(1);
    expect(first.stderr).toContain(
      'the checks changed files in the working tree (coverage/run.txt); add them to .gitignore',
    );
    const second = await ralph(dir, '--name', 'second', '1');
    expect(second.code, second.stderr).toBe(2);
    expect(second.stderr).toMatch(
      /uncommitted changes in the working tree; the agent would be blamed for them:\n\s+coverage\/run\.txt\nnot starting/,
    );
    expect(second.stderr).toContain(
      'the checks of an earlier run wrote coverage/run.txt (the runner warned then): list it in .gitignore, then start again',
    );
  });
});
