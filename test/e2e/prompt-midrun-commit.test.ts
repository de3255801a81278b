// Owners steer a running loop by editing ralph/prompt.md between iterations. The runner commits such an edit before
// the next agent run (chore(ralph): commit the edits to ...), so the next claim is not rejected as uncommitted work
// and the agent does not sweep the edit into its own commit. Needs `npm run build` first (npm test does it).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, testdir, writeFiles } from '../support/repo.js';
import { loopRepo, startRalph } from '../support/loop-repo.js';
import { parseLedger } from '../../src/engine/store/ledger.js';
import { waitUntil } from '../support/process.js';

const STEER = '\n## From the owner, mid-run\nName every test file after its story.\n';

// Iteration 1 waits (doing nothing else) until the test, as the owner, has edited the prompt; iteration 2 does the
// open story and commits only its own files, as a careful agent does. Every run saves the prompt it got on stdin.
const AGENT = `
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
const dir = process.env.RALPH_RUN_DIR;
const n = process.env.RALPH_ITERATION;
writeFileSync(path.join(dir, 'stdin-' + n + '.txt'), readFileSync(0));
if (n === '1') {
  writeFileSync(path.join(dir, 'agent-waiting'), '');
  const deadline = Date.now() + 20000;
  while (!existsSync(path.join(dir, 'go')) && Date.now() < deadline) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25);
  console.log('Read the code; nothing to commit yet.');
} else {
  const prd = JSON.parse(readFileSync('ralph/prd.json', 'utf8'));
  const story = prd.userStories.find((s) => !s.passes);
  writeFileSync(story.id + '.txt', 'done\\n');
  story.passes = true;
  writeFileSync('ralph/prd.json', JSON.stringify(prd, null, 2) + '\\n');
  execFileSync('git', ['add', '--', story.id + '.txt', 'ralph/prd.json']);
  execFileSync('git', ['commit', '-q', '-m', 'feat: ' + story.id]);
  console.log('<promise>COMPLETE</promise>');
}
`;

function agentCmd(): string {
  const file = path.join(testdir('ralphkit-agent-'), 'steered.mjs');
  writeFileSync(file, AGENT);
  return `node ${JSON.stringify(file)}`;
}

/** Starts a loop on one story and, while iteration 1's agent runs, appends STEER to `promptFile` as the owner would. */
async function steeredRun(dir: string, promptFile: string, extra: string[] = []) {
  const runDir = path.join(dir, 'ralph/.runs/steer');
  const { done } = startRalph(dir, ['--agent-cmd', agentCmd(), '--pause', '0', '--name', 'steer', ...extra, '3']);
  await waitUntil(() => existsSync(path.join(runDir, 'agent-waiting')), 20_000, "iteration 1's agent to start");
  writeFileSync(promptFile, readFileSync(promptFile, 'utf8') + STEER);
  writeFileSync(path.join(runDir, 'go'), '');
  const r = await done;
  const stdin = (n: number) => readFileSync(path.join(runDir, `stdin-${n}.txt`), 'utf8');
  const verdicts = parseLedger(readFileSync(path.join(runDir, 'ledger.jsonl'), 'utf8')).flatMap((l) => (l.kind === 'verdict' && !l.gate ? [`${l.story}:${l.status}`] : []));
  return { r, stdin, verdicts };
}

const subjects = (dir: string) => git(dir, 'log', '--format=%s').split('\n');

describe('a prompt edited while the loop runs', () => {
  it('is committed by the runner before the next agent run, alone; the next claim is verified and that agent got the edit', async () => {
    const dir = loopRepo({ stories: 1 });
    const { r, stdin, verdicts } = await steeredRun(dir, path.join(dir, 'ralph/prompt.md'));
    expect(r.code, r.stderr).toBe(0);
    expect(verdicts).toEqual(['US-001:verified']);
    // One runner commit with the prompt and nothing else, between the two agent runs; the agent's commit lacks it.
    expect(subjects(dir).slice(0, 3)).toEqual(['feat: US-001', 'chore(ralph): commit the edits to ralph/prompt.md', 'install ralph']);
    expect(git(dir, 'show', '--name-only', '--format=', 'HEAD~1')).toBe('ralph/prompt.md');
    expect(git(dir, 'show', '--name-only', '--format=', 'HEAD').split('\n').sort()).toEqual(['US-001.txt', 'ralph/prd.json']);
    expect(git(dir, 'show', 'HEAD~1:ralph/prompt.md')).toContain('Name every test file after its story.');
    // Said so, after iteration 2 began and before its agent ran.
    const note = r.stderr.indexOf('ralph/prompt.md has uncommitted edits: the runner commits them before iteration 2');
    expect(note, r.stderr).toBeGreaterThan(r.stderr.indexOf('iteration 2/3'));
    expect(r.stderr).toMatch(/committed ralph\/prompt\.md as [0-9a-f]{7}/);
    expect(stdin(1)).not.toContain('Name every test file after its story.');
    expect(stdin(2)).toContain('Name every test file after its story.');
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it('a --prompt file outside the repository is read fresh but never committed', async () => {
    const dir = loopRepo({ stories: 1 });
    const outside = path.join(testdir('ralphkit-prompt-'), 'prompt.md');
    writeFiles(path.dirname(outside), { 'prompt.md': 'Do the next story of ralph/prd.json, commit, set passes.\n' });
    const { r, stdin, verdicts } = await steeredRun(dir, outside, ['--prompt', outside]);
    expect(r.code, r.stderr).toBe(0);
    expect(verdicts).toEqual(['US-001:verified']);
    expect(subjects(dir).slice(0, 2)).toEqual(['feat: US-001', 'install ralph']);
    expect(r.stderr).not.toMatch(/uncommitted edits|could not commit/);
    expect(stdin(2)).toContain('Name every test file after its story.');
  });

  it('a prompt git ignores is read fresh, never committed, and never said to be', async () => {
    const dir = loopRepo({ stories: 1 });
    writeFiles(dir, { '.gitignore': 'ralph/my-prompt.md\n' });
    git(dir, 'add', '.gitignore');
    git(dir, 'commit', '-q', '-m', 'ignore my prompt');
    writeFiles(dir, { 'ralph/my-prompt.md': 'Do the next story of ralph/prd.json, commit, set passes.\n' });
    const { r, stdin, verdicts } = await steeredRun(dir, path.join(dir, 'ralph/my-prompt.md'), ['--prompt', 'ralph/my-prompt.md']);
    expect(r.code, r.stderr).toBe(0);
    expect(verdicts).toEqual(['US-001:verified']);
    expect(subjects(dir).slice(0, 2)).toEqual(['feat: US-001', 'ignore my prompt']);
    expect(r.stderr).not.toMatch(/uncommitted edits|commit the edits|could not commit/);
    expect(stdin(2)).toContain('Name every test file after its story.');
  });
});
