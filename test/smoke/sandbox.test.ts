// The sandbox end to end, on every Node version: with no option at all (the default where bubblewrap works) the honest
// agent runs under real bubblewrap, writes and commits from inside the sandbox, and the loop ends verified. The attacks
// the sandbox stops are test/e2e/sandbox-loop.test.ts.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeSandbox } from '../../src/engine/agents/sandbox.js';
import { copyRepo, passes, prepareTemplate, sandboxRalph, type Template } from '../support/attack-repo.js';

const probe = probeSandbox(process.env);
let plan: Template;

beforeAll(async () => {
  if (probe.ok) plan = await prepareTemplate();
});
afterAll(() => plan?.remove());

describe.skipIf(!probe.ok)(
  `./ralph/ralph.sh under bubblewrap (the default)${probe.ok ? '' : ` (skipped: ${probe.message})`}`,
  () => {
    it('the honest agent, sandboxed by default (no --sandbox typed): exit 0, both stories verified, committed from inside the sandbox', async () => {
      const dir = copyRepo(plan);
      const r = await sandboxRalph(dir, 'honest', ['5']);
      expect(r.code, r.output).toBe(0);
      expect(passes(dir)).toEqual({ 'US-1': true, 'US-2': true });
      // The loop recorded the choice (a resume keeps it) and said nothing about running without it.
      expect(JSON.parse(readFileSync(path.join(dir, 'ralph/.runs/e2e/state.json'), 'utf8')).options.sandbox).toBe(true);
      expect(r.output).not.toContain('not sandboxed');
    });
  },
);
