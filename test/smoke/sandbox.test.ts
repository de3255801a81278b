// --sandbox end to end, on every Node version: the honest agent runs under real bubblewrap, writes and commits from
// inside the sandbox, and the loop ends verified. The attacks the sandbox stops are test/e2e/sandbox-loop.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeSandbox } from '../../src/engine/agents/sandbox.js';
import { copyRepo, passes, prepareTemplate, sandboxRalph, type Template } from '../support/attack-repo.js';

const probe = probeSandbox(process.env);
let plan: Template;

beforeAll(async () => {
  if (probe.ok) plan = await prepareTemplate();
});
afterAll(() => plan?.remove());

describe.skipIf(!probe.ok)(`./ralph/ralph.sh --sandbox under bubblewrap${probe.ok ? '' : ` (skipped: ${probe.message})`}`, () => {
  it('the honest agent: exit 0, both stories verified, committed from inside the sandbox', async () => {
    const dir = copyRepo(plan);
    const r = await sandboxRalph(dir, 'honest', ['--sandbox', '5']);
    expect(r.code, r.output).toBe(0);
    expect(passes(dir)).toEqual({ 'US-1': true, 'US-2': true });
  });
});
