// Options that change when a loop ends, as a user types them: a completion word of their own, announced to the agent
// in the runner's preamble and kept on resume; max_iterations 0 (no cap) only with a budget; and the cost `status`
// shows being the one the loop printed. Needs `npm run build` first (npm test does it).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, runCli } from '../support/repo.js';
import { agent, loopRepo, onlyState, ralph } from '../support/loop-repo.js';

const FAST = ['--pause', '0'];
// Saves the prompt it was sent and ends with the loop's own completion word, doing no work.
const SAYS_DONE = 'cat > "$RALPH_RUN_DIR/prompt-$RALPH_ITERATION.txt"; echo "<promise>WORK_COMPLETE</promise>"';

describe('--completion-promise', () => {
  it('tells the agent the word in the preamble, leaves prompt.md alone, and is kept on resume', async () => {
    const dir = loopRepo({ stories: 1 });
    const promptBefore = readFileSync(path.join(dir, 'ralph/prompt.md'), 'utf8');
    const r = await ralph(dir, [
      '--agent-cmd',
      SAYS_DONE,
      '--completion-promise',
      'WORK_COMPLETE',
      '--name',
      'word',
      ...FAST,
      '1',
    ]);
    expect(r.code).toBe(1);
    // The word counted as the completion tag, and (stories still open) was not believed.
    expect(r.stderr).toContain('said COMPLETE');
    expect(r.stderr).toContain('WORK_COMPLETE ignored: 1 story not passing under verification (US-001)');
    const sent = readFileSync(path.join(dir, 'ralph/.runs/word/prompt-1.txt'), 'utf8');
    expect(
      sent.startsWith('Note from the runner: in this loop the completion tag is <promise>WORK_COMPLETE</promise>.'),
    ).toBe(true);
    expect(sent.endsWith(promptBefore)).toBe(true);
    expect(readFileSync(path.join(dir, 'ralph/prompt.md'), 'utf8')).toBe(promptBefore);
    expect(git(dir, 'status', '--porcelain')).toBe('');

    const resumed = await ralph(dir, ['--agent-cmd', SAYS_DONE, '--resume', 'word', ...FAST, '2']);
    expect(resumed.stderr).toContain('WORK_COMPLETE ignored');
    expect(readFileSync(path.join(dir, 'ralph/.runs/word/prompt-2.txt'), 'utf8')).toContain(
      'the completion tag is <promise>WORK_COMPLETE</promise>',
    );
    expect(onlyState(dir).options).toMatchObject({ completionPromise: 'WORK_COMPLETE' });
  });

  it('without it, the prompt goes out as the file says and COMPLETE is the word', async () => {
    const dir = loopRepo({ stories: 1 });
    const r = await ralph(dir, [
      '--agent-cmd',
      SAYS_DONE.replace('WORK_COMPLETE', 'COMPLETE'),
      '--name',
      'plain',
      ...FAST,
      '1',
    ]);
    expect(r.stderr).toContain('COMPLETE ignored');
    expect(readFileSync(path.join(dir, 'ralph/.runs/plain/prompt-1.txt'), 'utf8')).toBe(
      readFileSync(path.join(dir, 'ralph/prompt.md'), 'utf8'),
    );
  });

  it('refuses a word that is not one, before anything runs', async () => {
    const dir = loopRepo({ stories: 1 });
    const r = await ralph(dir, ['--agent-cmd', SAYS_DONE, '--completion-promise', 'STUCK', '1']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      '--completion-promise "STUCK" cannot be the completion tag\'s word: STUCK is the tag an agent gives up with',
    );
    expect(r.stderr).toContain('hint: see ./ralph/ralph.sh --help');
  });
});

describe('max_iterations 0', () => {
  it('is refused without a budget (exit 2, nothing recorded), with the command that bounds it', async () => {
    const dir = loopRepo({ stories: 1 });
    for (const args of [['0'], ['--max-cost', '5', '0']]) {
      const r = await ralph(dir, ['--agent-cmd', agent('worker'), ...FAST, ...args]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('max_iterations 0 means no iteration cap: it needs a budget that ends the loop');
      expect(r.stderr).toContain('--max-cost 20 0');
    }
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(git(dir, 'branch', '--show-current')).toBe('main');
  });

  it('with --max-cost runs past ten iterations until done; the loop, status and the state agree on iterations and cost', async () => {
    // No checks (stories taken on the agent's word): eleven iterations stay cheap; verification is not what this tests.
    const dir = loopRepo({ stories: 11, checks: [] });
    const env = { RALPH_CLAUDE_BIN: agent('claude-stream'), FAKE_COST: '0.0001', IS_SANDBOX: '1' };
    const r = await ralph(dir, ['--agent', 'claude', '--max-cost', '1', '--name', 'open', ...FAST, '0'], env, 110_000);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('iterations 1..∞');
    expect(r.stderr).toContain('━━ iteration 11/∞ ━━');
    expect(r.stderr).not.toMatch(/\/0\b/);
    expect(onlyState(dir)).toMatchObject({ maxIterations: 0, iteration: 11, status: 'complete' });
    const printed = [...r.stderr.matchAll(/cost so far (\S+)/g)].at(-1)![1];
    expect(printed).toBe('$0.0011');
    const status = await runCli(['status'], { cwd: dir });
    const row = status.stdout.split('\n').find((l) => l.startsWith('open '))!;
    expect(row.split(/\s{2,}/)).toEqual(expect.arrayContaining(['11/∞', printed]));
  }, 150_000);
});
