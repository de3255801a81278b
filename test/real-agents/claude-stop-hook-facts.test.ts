// The facts the in-session loop (SPEC §12, docs/agents.md "Claude Code Stop hooks") is designed around, measured
// on the real Claude Code CLI in `-p` mode with a tiny probe hook. A CLI upgrade that changes one of them fails here.
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { FIXTURES, gitdir, run, testdir } from '../support/repo.js';
import { requestText, startModelServer } from '../support/model-server.js';
import {
  CLAUDE_BIN,
  CLAUDE_PRINT_ARGS,
  SKIP_CLAUDE,
  claudeEnv,
  requireClaude,
  streamEvents,
} from '../support/model-claude.js';

interface ProbeLine {
  input: Record<string, unknown>;
  projectDir: string | null;
  cwd: string;
}

/** Runs `claude -p` once in a fresh repository whose .claude/settings.json has the probe as its one Stop hook. */
async function probeRun(
  mode: string,
  options: { env?: Record<string, string>; timeout?: number; subfolder?: string } = {},
) {
  const repo = gitdir({ 'src/index.js': '\n' });
  mkdirSync(path.join(repo, '.claude/hooks'), { recursive: true });
  copyFileSync(path.join(FIXTURES, 'hooks/stop-probe.mjs'), path.join(repo, '.claude/hooks/stop-probe.mjs'));
  const hook = {
    type: 'command',
    command: 'node "$CLAUDE_PROJECT_DIR/.claude/hooks/stop-probe.mjs"',
    ...(options.timeout ? { timeout: options.timeout } : {}),
  };
  writeFileSync(
    path.join(repo, '.claude/settings.json'),
    JSON.stringify({ hooks: { Stop: [{ hooks: [hook] }] } }, null, 2),
  );
  const server = await startModelServer({
    repo,
    scenario: ({ call }) => ({ blocks: [{ type: 'text', text: `answer ${call}` }] }),
  });
  onTestFinished(() => server.close());
  const log = path.join(testdir('ralphkit-probe-'), 'calls.jsonl');
  const env = claudeEnv(server, { PROBE_MODE: mode, PROBE_LOG: log, ...options.env });
  const res = await run(CLAUDE_BIN, CLAUDE_PRINT_ARGS, {
    cwd: path.join(repo, options.subfolder ?? ''),
    env,
    input: 'Say hi.',
    timeoutMs: 120_000,
  });
  const calls: ProbeLine[] = existsSync(log)
    ? readFileSync(log, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
  const events = streamEvents(res.stdout);
  return { repo, res, calls, mains: server.mainRequests(), events, result: events.find((e) => e.type === 'result')! };
}

/** The session's transcript (the path the hook input names), one parsed line per entry. */
function transcriptOf(sessionId: string, calls: ProbeLine[]): Array<Record<string, any>> {
  const file = calls[0].input.transcript_path as string;
  expect(path.basename(file)).toBe(`${sessionId}.jsonl`);
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

describe.skipIf(SKIP_CLAUDE)('Claude Code Stop hooks, as the in-session loop relies on them', () => {
  it('fire in -p mode from the project settings, with the documented input and $CLAUDE_PROJECT_DIR set', async () => {
    requireClaude();
    const { repo, res, calls, mains, result } = await probeRun('allow');

    expect(res.code, res.stderr).toBe(0);
    expect(calls).toHaveLength(1);
    const { input } = calls[0];
    expect(input).toMatchObject({
      hook_event_name: 'Stop',
      stop_hook_active: false,
      cwd: repo,
      last_assistant_message: 'answer 1',
    });
    expect(input.session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(input.session_id).toBe(result.session_id);
    expect(input.transcript_path).toBe(
      path.join(path.dirname(input.transcript_path as string), `${input.session_id}.jsonl`),
    );
    expect(calls[0].projectDir).toBe(repo);
    expect(calls[0].cwd).toBe(repo);
    expect(mains).toHaveLength(1);
    expect(result.result).toBe('answer 1');
  });

  it('do not fire when Claude Code starts in a subfolder of the repository whose .claude/settings.json has them', async () => {
    requireClaude();
    const { res, calls, mains } = await probeRun('block-json', { subfolder: 'src' });

    expect(res.code, res.stderr).toBe(0);
    expect(calls).toEqual([]);
    expect(mains).toHaveLength(1);
  });

  it.each([
    ['a JSON decision on stdout', 'block-json-once', /Stop hook feedback:\nPROBE-BLOCK-REASON 1/],
    [
      'exit code 2 with the reason on stderr',
      'block-exit2-once',
      /Stop hook feedback:\n\[node "\$CLAUDE_PROJECT_DIR\/\.claude\/hooks\/stop-probe\.mjs"\]: PROBE-EXIT2-REASON 1/,
    ],
  ])(
    'block a stop with %s: the model gets the reason, the next stop says stop_hook_active',
    async (_name, mode, shown) => {
      requireClaude();
      const { res, calls, mains, result } = await probeRun(mode);

      expect(res.code, res.stderr).toBe(0);
      expect(calls.map((c) => c.input.stop_hook_active)).toEqual([false, true]);
      expect(calls[1].input.session_id).toBe(calls[0].input.session_id);
      expect(mains).toHaveLength(2);
      expect(requestText(mains[1])).toMatch(shown);
      expect(result.result).toBe('answer 2');
    },
  );

  it.each([
    ['the default cap of 8', {}, 9],
    ['CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=2', { CLAUDE_CODE_STOP_HOOK_BLOCK_CAP: '2' }, 3],
  ])('end the turn themselves after %s consecutive blocks, however the hook answers', async (_name, env, hookCalls) => {
    requireClaude();
    const { res, calls, mains, events, result } = await probeRun('block-json', { env });

    expect(res.code, res.stderr).toBe(0);
    expect(calls).toHaveLength(hookCalls);
    expect(mains).toHaveLength(hookCalls);
    const warning = events.find((e) => e.type === 'system' && e.subtype === 'informational');
    expect(warning?.content).toContain(`A hook blocked the turn from ending ${hookCalls} consecutive times`);
    expect(result).toMatchObject({ subtype: 'success', is_error: false, result: '' });
  });

  it('show a systemMessage printed with exit 0 as a notice in the stream and the transcript, and stop the session without another model request', async () => {
    requireClaude();
    const { res, calls, mains, events, result } = await probeRun('system-message');

    expect(res.code, res.stderr).toBe(0);
    expect(calls).toHaveLength(1);
    expect(mains).toHaveLength(1);
    expect(events.filter((e) => e.type === 'system' && e.subtype === 'informational')).toEqual([
      expect.objectContaining({ content: 'Stop says: PROBE-SYSTEM-MESSAGE 1', level: 'notice' }),
    ]);
    expect(result).toMatchObject({ subtype: 'success', result: 'answer 1' });
    expect(transcriptOf(result.session_id, calls)).toContainEqual(
      expect.objectContaining({
        attachment: expect.objectContaining({ type: 'hook_system_message', content: 'PROBE-SYSTEM-MESSAGE 1' }),
      }),
    );
  });

  it('with continue: false, stop the session too; the stopReason is not in the stream, only in the transcript (as a <system-reminder>)', async () => {
    requireClaude();
    const { res, mains, events, result, calls } = await probeRun('stop-false');

    expect(res.code, res.stderr).toBe(0);
    expect(mains).toHaveLength(1);
    expect(res.stdout).not.toContain('PROBE-STOP-REASON');
    expect(events.filter((e) => e.type === 'system' && e.subtype === 'informational').map((e) => e.content)).toEqual([
      'Stop says: PROBE-SYSTEM-MESSAGE 1',
    ]);
    expect(result).toMatchObject({ subtype: 'success', result: 'answer 1' });
    const stopped = transcriptOf(result.session_id, calls).find(
      (l) => l.attachment?.type === 'hook_stopped_continuation',
    );
    expect(stopped?.rendered?.[0]?.content).toBe(
      '<system-reminder>\nStop hook stopped continuation: PROBE-STOP-REASON 1\n</system-reminder>',
    );
  });

  it.each([
    ['exits 1', 'crash', {}],
    ['prints garbage and exits 0', 'garbage', {}],
    ['outlives its timeout (and would block afterwards)', 'sleep', { timeout: 2 }],
  ])('let the session stop when the hook %s', async (_name, mode, options) => {
    requireClaude();
    const { res, calls, mains, result } = await probeRun(mode, options);

    expect(res.code, res.stderr).toBe(0);
    expect(calls).toHaveLength(1);
    expect(mains).toHaveLength(1);
    expect(result).toMatchObject({ subtype: 'success', result: 'answer 1' });
  });
});
