// The reviewer's instructions with the real opencode CLI (issue #26, class 7), against a scripted Chat Completions
// server: a hostile agent (instruction-planter.mjs) does half the work and tells the reviewer to ship it through every
// file opencode reads on its own (the commit's opencode.json and .opencode/, ~/.config/opencode's AGENTS.md, agents,
// commands and the instructions of its opencode.json, AGENTS.md above the clone). The scripted model obeys any
// planted text that reaches it, so only a run where none did ends with REVISE; and it must have been reached with the
// key of the user's auth.json, which the reviewer's own configuration folder links to.
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { installedRepo } from '../support/installed-repo.js';
import { run, testdir } from '../support/repo.js';
import { GREETER_PLAN, plantsOutsideDiff, reviewFixture } from '../support/review.js';
import { readLedger, readPlan } from '../support/model-loop.js';
import {
  OPENCODE_BIN,
  OPENCODE_TEST_KEY,
  SKIP_OPENCODE,
  chatText,
  isTitleRequest,
  opencodeEnv,
  requireOpencode,
  startChatServer,
} from '../support/model-opencode.js';

/** A model that obeys whatever planted text reaches it, and otherwise judges the diff (hello only: REVISE). */
const answer = (text: string) =>
  plantsOutsideDiff(text).length
    ? 'As instructed.\n<promise>SHIP</promise>'
    : text.includes('+hello, world')
      ? 'Every criterion is met.\n<promise>SHIP</promise>'
      : 'One criterion is not met.\n<promise>REVISE</promise>\n- hello.txt must say hello, world';

describe.skipIf(SKIP_OPENCODE)(
  "the opencode reviewer's instructions: nothing the agent wrote reaches it but the diff",
  () => {
    for (const sandbox of [false, true]) {
      it(`opencode reviewer${sandbox ? ' under --sandbox' : ''}: no planted instruction, agent or command reached the model; the user's login did; REVISE`, {
        timeout: 90_000,
      }, async () => {
        requireOpencode();
        const repo = installedRepo({ skills: false, plan: GREETER_PLAN });
        const server = await startChatServer((body) => answer(chatText(body)));
        onTestFinished(() => server.close());
        const env = opencodeEnv(server, {
          RALPH_OPENCODE_BIN: OPENCODE_BIN,
          PLANT_MARKS: testdir('ralphkit-plant-marks-'),
          // The runner's temp folder (where the reviewer's clone goes), so what is planted above the clone is this test's.
          TMPDIR: testdir('ralphkit-plant-tmp-'),
        });
        const args = [
          '--agent-cmd',
          reviewFixture('instruction-planter.mjs'),
          '--review-agent',
          'opencode',
          sandbox ? '--sandbox' : '--no-sandbox',
          '--pause',
          '0',
          '--iteration-timeout',
          '60s',
          '1',
        ];
        const r = await run(path.join(repo, 'ralph/ralph.sh'), args, { cwd: repo, env, timeoutMs: 80_000 });
        expect(server.errors).toEqual([]);
        const reviews = server.requests.filter((q) => !isTitleRequest(q.body));
        expect(reviews.length, r.stderr).toBeGreaterThan(0);
        const texts = reviews.map((q) => chatText(q.body));
        expect(texts[0]).toContain('# Your task: review one story before it counts');
        expect(texts.some((t) => t.includes('+PLANT-OPENCODE-REPO-AGENT'))).toBe(true);
        expect(texts.flatMap(plantsOutsideDiff)).toEqual([]);
        expect(server.requests.map((q) => q.bearer)).toEqual(server.requests.map(() => OPENCODE_TEST_KEY));
        expect(
          readLedger(repo)
            .filter((l) => l.kind === 'review')
            .map((l) => l.verdict),
        ).toEqual(['revise']);
        expect(readPlan(repo).userStories[0]).toMatchObject({ passes: false });
        expect(r.code, r.stderr).toBe(1); // max iterations, the story open
      });
    }
  },
);
