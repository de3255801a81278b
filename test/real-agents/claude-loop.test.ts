// The installed loop (`ralph/ralph.sh --agent claude`) driving the real Claude Code CLI, whose "model" is the
// scripted server: the whole product as a user runs it, minus the network.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { git } from '../support/repo.js';
import { requestText } from '../support/model-server.js';
import { ralphWorker } from '../support/model-scenarios.js';
import { SKIP_CLAUDE, requireClaude } from '../support/model-claude.js';
import {
  honestWork,
  installedRepo,
  ralphWithClaude,
  readLedger,
  readPlan,
  readState,
  serve,
  skillDescription,
} from '../support/model-loop.js';

describe.skipIf(SKIP_CLAUDE)('ralph.sh --agent claude with the real Claude Code CLI', () => {
  it('completes a two-story plan with checks: exit 0, two feat: commits, both stories verified', async () => {
    requireClaude();
    const repo = await installedRepo();
    const server = await serve(ralphWorker({ decide: honestWork }), repo);

    const res = await ralphWithClaude(repo, server, ['5']);

    expect(server.errors).toEqual([]);
    expect(res.code, res.stderr).toBe(0);
    const feats = git(repo, 'log', '--format=%H %s', '--grep=^feat:').split('\n');
    expect(feats.map((l) => l.slice(41))).toEqual(['feat: US-002 - Say two', 'feat: US-001 - Say one']);
    expect(git(repo, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('ralph/greeter');
    expect(readPlan(repo).userStories.map((s) => s.passes)).toEqual([true, true]);

    // The runner ran each story's check itself, at the commit the model made for it.
    const verdicts = readLedger(repo).filter((l) => l.kind === 'verdict' && !l.gate);
    expect(verdicts.map((v) => [v.story, v.status, v.commit])).toEqual([
      ['US-001', 'verified', feats[1].slice(0, 40)],
      ['US-002', 'verified', feats[0].slice(0, 40)],
    ]);
    // Each iteration was a fresh CLI run that got ralph/prompt.md on stdin, and its tool calls were shown live.
    const firstTurns = server.mainRequests().filter((b) => !b.messages!.some((m) => m.role === 'assistant'));
    expect(firstTurns).toHaveLength(2);
    const prompt = readFileSync(path.join(repo, 'ralph/prompt.md'), 'utf8').trim();
    expect(requestText(firstTurns[1])).toContain(prompt.slice(0, 200));
    expect(res.stderr).toContain('Bash: node -e');
    // Claude Code's own cost report (the result event's total_cost_usd) reached the loop's state.
    expect(readState(repo).costUsd).toBeGreaterThan(0);
  });

  it('rejects a story the model claims without passing its check', async () => {
    requireClaude();
    const repo = await installedRepo();
    const liar = ralphWorker({
      decide: () => ({ claim: true, commit: true, progress: 'claimed without doing the work' }),
    });
    const server = await serve(liar, repo);

    const res = await ralphWithClaude(repo, server, ['1']);

    expect(server.errors).toEqual([]);
    expect(res.code).not.toBe(0);
    expect(git(repo, 'log', '--format=%s', '--grep=^feat:')).toBe('feat: US-001 - Say one');
    const story = readPlan(repo).userStories[0];
    expect(story.passes).toBe(false);
    expect(story.notes).toContain('grep -qx one one.txt');
    expect(readFileSync(path.join(repo, 'ralph/progress.txt'), 'utf8')).toContain('grep -qx one one.txt');
    const failed = readLedger(repo).find((l) => l.kind === 'check' && l.command === 'grep -qx one one.txt');
    expect(failed?.exitCode).not.toBe(0);
  });

  it("shows the installed prd and ralph skills, with their descriptions, in Claude Code's request to the model", async () => {
    requireClaude();
    const repo = await installedRepo();
    const server = await serve(() => ({ blocks: [{ type: 'text', text: 'Nothing to do yet.' }] }), repo);

    await ralphWithClaude(repo, server, ['1'], { via: 'env' });

    const sent = requestText(server.mainRequests()[0]);
    for (const skill of ['prd', 'ralph']) {
      const description = skillDescription(path.join(repo, `.claude/skills/${skill}/SKILL.md`));
      expect(description.length).toBeGreaterThan(20);
      expect(sent).toContain(`- ${skill}: ${description}`);
    }
  });
});
