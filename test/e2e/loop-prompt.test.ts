// Users are told to tailor ralph/prompt.md. An edit they have not committed does not refuse the start: the
// runner commits it as its own bookkeeping before the first iteration, so the agent's first claim is not
// rejected for it. Any other uncommitted file still refuses. Needs `npm run build` first (npm test does it).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { installedRepo } from '../support/installed-repo.js';
import { FIXTURES, git, run, writeFiles, type RunResult } from '../support/repo.js';
import { parseLedger } from '../../src/engine/store/ledger.js';
import type { Prd } from '../../src/prd/types.js';
import { fileStory, planText } from '../support/plan.js';

const PLAN: Prd = {
  project: 'Demo',
  branchName: 'ralph/demo',
  checks: ['test -f README.md'],
  userStories: [fileStory('US-1', 1)],
};
const EDIT = '\n## Our project\nRun `npm test` before every commit.\n';

async function installed(): Promise<string> {
  const dir = installedRepo({ skills: false, plan: planText(PLAN), message: 'chore: install ralphkit' });
  return dir;
}

function ralph(dir: string, ...args: string[]): Promise<RunResult> {
  const agentCmd = `node ${JSON.stringify(path.join(FIXTURES, 'verify', 'honest.mjs'))}`;
  return run(path.join(dir, 'ralph/ralph.sh'), ['--agent-cmd', agentCmd, '--pause', '0', '--name', 'e2e', ...args], {
    cwd: dir,
  });
}

const subjects = (dir: string) => git(dir, 'log', '--format=%s').split('\n');
const editPrompt = (dir: string, file = 'ralph/prompt.md') =>
  writeFiles(dir, { [file]: readFileSync(path.join(dir, file), 'utf8') + EDIT });
function verdicts(dir: string): string[] {
  return parseLedger(readFileSync(path.join(dir, 'ralph/.runs/e2e/ledger.jsonl'), 'utf8')).flatMap((l) =>
    l.kind === 'verdict' && !l.gate ? [`${l.story}:${l.status}`] : [],
  );
}

describe('an uncommitted edit to the prompt at start', () => {
  it('is committed by the runner before iteration 1, said so, and the first claim is verified', async () => {
    const dir = await installed();
    editPrompt(dir);
    const r = await ralph(dir, '3');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      'ralph/prompt.md has uncommitted edits: the runner commits them before the first iteration',
    );
    expect(r.stderr).toMatch(
      /committed ralph\/prompt\.md as [0-9a-f]{7} \(chore\(ralph\): commit the edits to ralph\/prompt\.md\)/,
    );
    expect(r.stderr.indexOf('commit the edits to ralph/prompt.md')).toBeLessThan(r.stderr.indexOf('iteration 1/3'));
    expect(subjects(dir).slice(-3)).toEqual([
      'chore(ralph): commit the edits to ralph/prompt.md',
      'chore: install ralphkit',
      'initial',
    ]);
    expect(git(dir, 'show', 'HEAD:ralph/prompt.md')).toContain('Run `npm test` before every commit.');
    expect(verdicts(dir)).toEqual(['US-1:verified']);
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it('any other uncommitted file still refuses the start (exit 2), and only that file is listed', async () => {
    const dir = await installed();
    editPrompt(dir);
    writeFiles(dir, { 'notes.txt': 'mine\n' });
    const r = await ralph(dir, '3');
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(
      /uncommitted changes in the working tree; the agent would be blamed for them:\n\s+notes\.txt\nnot starting/,
    );
    expect(r.stderr).not.toMatch(/^\s+ralph\/prompt\.md$/m);
    expect(subjects(dir)[0]).toBe('chore: install ralphkit'); // nothing committed
    expect(git(dir, 'status', '--porcelain', '--', 'ralph/prompt.md')).toBe('M ralph/prompt.md');
  });

  it("an edited prompt that the plan's existing branch holds differently: the switch works and the user's text wins", async () => {
    const dir = await installed();
    git(dir, 'checkout', '-q', '-b', 'ralph/demo');
    writeFiles(dir, { 'ralph/prompt.md': 'an older prompt on the branch\n' });
    git(dir, 'commit', '-q', '-am', 'older prompt');
    git(dir, 'checkout', '-q', 'main');
    editPrompt(dir);
    const mine = readFileSync(path.join(dir, 'ralph/prompt.md'), 'utf8');
    const r = await ralph(dir, '3');
    expect(r.code, r.stderr).toBe(0);
    expect(git(dir, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('ralph/demo');
    expect(readFileSync(path.join(dir, 'ralph/prompt.md'), 'utf8')).toBe(mine);
    expect(subjects(dir)).toContain('chore(ralph): commit the edits to ralph/prompt.md');
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it("a --prompt file of the user's own, never committed, is committed the same way", async () => {
    const dir = await installed();
    writeFiles(dir, { 'docs/loop-prompt.md': 'Do the next story of ralph/prd.json, commit, set passes.\n' });
    const r = await ralph(dir, '--prompt', 'docs/loop-prompt.md', '3');
    expect(r.code, r.stderr).toBe(0);
    expect(subjects(dir)).toContain('chore(ralph): commit the edits to docs/loop-prompt.md');
    expect(git(dir, 'ls-files', 'docs')).toBe('docs/loop-prompt.md');
  });
});
