// The real Claude Code CLI, run directly against the scripted model server: proves the server speaks enough of
// the Messages API (streaming text and tool use) for the CLI to act on a repository, before the loop is involved.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { git, gitdir } from '../support/repo.js';
import { requestText, startModelServer, type Scenario } from '../support/model-server.js';
import { ralphWorker } from '../support/model-scenarios.js';
import { SKIP_CLAUDE, requireClaude, runClaude, streamEvents } from '../support/model-claude.js';

const PLAN = {
  project: 'Demo',
  branchName: 'ralph/demo',
  checks: ['test -f README.md'],
  userStories: [
    {
      id: 'US-001',
      title: 'Greeting file',
      acceptanceCriteria: ['hello.txt says hello'],
      priority: 1,
      passes: false,
      checks: ['grep -q hello hello.txt'],
    },
  ],
};

async function serve(scenario: Scenario, repo?: string) {
  const server = await startModelServer({ scenario, repo });
  onTestFinished(() => server.close());
  return server;
}

describe.skipIf(SKIP_CLAUDE)('claude CLI against the scripted model server', () => {
  it('runs a Bash tool call that does a story and commits, then reports the final message and cost', async () => {
    requireClaude();
    const repo = gitdir({ 'ralph/prd.json': JSON.stringify(PLAN, null, 2), 'ralph/progress.txt': '' });
    const server = await serve(
      ralphWorker({
        decide: () => ({
          files: { 'hello.txt': 'hello\n' },
          claim: true,
          runChecks: true,
          commit: true,
          progress: 'did US-001',
        }),
      }),
      repo,
    );

    const res = await runClaude(repo, server, 'Work the plan in ralph/prd.json.');

    expect(server.errors).toEqual([]);
    expect(res.code, res.stderr).toBe(0);
    expect(readFileSync(path.join(repo, 'hello.txt'), 'utf8')).toBe('hello\n');
    expect(git(repo, 'log', '-1', '--format=%s')).toBe('feat: US-001 - Greeting file');
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(JSON.parse(readFileSync(path.join(repo, 'ralph/prd.json'), 'utf8')).userStories[0].passes).toBe(true);

    const result = streamEvents(res.stdout).find((e) => e.type === 'result')!;
    expect(result.result).toMatch(/STORY-DONE US-001/);
    expect(result.result).toMatch(/^<promise>COMPLETE<\/promise>$/m);
    expect(typeof result.total_cost_usd).toBe('number');

    const [first, second] = server.mainRequests();
    expect(first.tools!.map((t) => t.name)).toEqual(expect.arrayContaining(['Bash', 'Read', 'Write', 'Edit']));
    expect(requestText(first)).toContain('Work the plan in ralph/prd.json.');
    expect(requestText(second)).toContain('STORY-DONE US-001');
  });

  it('sends a failing tool result back to the model, which can report it', async () => {
    requireClaude();
    const repo = gitdir();
    const scenario: Scenario = ({ turn, toolResults }) =>
      turn === 0
        ? {
            blocks: [
              {
                type: 'tool_use',
                name: 'Bash',
                input: { command: 'echo broken >&2; exit 7', description: 'Fail on purpose' },
              },
            ],
          }
        : {
            blocks: [
              { type: 'text', text: `saw error=${toolResults[0]?.isError} ${toolResults[0]?.text.includes('broken')}` },
            ],
          };
    const server = await serve(scenario, repo);

    const res = await runClaude(repo, server, 'Try it.');

    expect(res.code, res.stderr).toBe(0);
    expect(streamEvents(res.stdout).find((e) => e.type === 'result')!.result).toBe('saw error=true true');
  });

  it('writes and then edits a file through the Write and Edit tools', async () => {
    requireClaude();
    const repo = gitdir();
    const file = path.join(repo, 'notes.md');
    const steps: Scenario = ({ turn, toolResults }) => {
      if (turn === 0)
        return {
          blocks: [
            { type: 'tool_use', name: 'Write', input: { file_path: file, content: '# Notes\n\nfirst draft\n' } },
          ],
        };
      if (turn === 1)
        return {
          blocks: [
            {
              type: 'tool_use',
              name: 'Edit',
              input: { file_path: file, old_string: 'first draft', new_string: 'final text' },
            },
          ],
        };
      return { blocks: [{ type: 'text', text: `edit error=${toolResults[0]?.isError}` }] };
    };
    const server = await serve(steps, repo);

    const res = await runClaude(repo, server, 'Write the notes.');

    expect(res.code, res.stderr).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe('# Notes\n\nfinal text\n');
    expect(streamEvents(res.stdout).find((e) => e.type === 'result')!.result).toBe('edit error=false');
  });

  it('lists project skills from .claude/skills with their descriptions in the request', async () => {
    requireClaude();
    const repo = gitdir({
      '.claude/skills/demo-notes/SKILL.md':
        '---\nname: demo-notes\ndescription: Writes demo notes for the scripted model test.\n---\n\n# Demo\n',
    });
    const server = await serve(() => ({ blocks: [{ type: 'text', text: 'fine' }] }), repo);

    const res = await runClaude(repo, server, 'hi');

    expect(res.code, res.stderr).toBe(0);
    expect(existsSync(path.join(repo, '.claude/skills/demo-notes/SKILL.md'))).toBe(true);
    expect(requestText(server.mainRequests()[0])).toContain(
      '- demo-notes: Writes demo notes for the scripted model test.',
    );
  });
});
