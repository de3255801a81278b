// `status`, `ralph.mjs status` and the dashboard after a real loop (SPEC §6 "Verdict record"): a story is verified
// only from the runner's sealed record (a note under refs/notes/ralphkit, with the key in $RALPH_KEY_DIR); what the
// agent can write (ledger lines, whole loop folders, the note's JSON) shows as reported or nothing. Each test has a
// key folder of its own, used by the runner and by the readers alike. Needs `npm run build` first.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git, run, runCli, writeFiles } from '../support/repo.js';
import { copyRepo, prepareTemplate, ralph, type Template } from '../support/attack-repo.js';
import { editNote, keyEnv } from '../support/verdict-note.js';
import { startView } from '../support/view-cli.js';
import { getJson } from '../support/view-http.js';

let checked: Template;
let halfChecked: Template;

beforeAll(async () => {
  // US-1 and US-2 both checked; and a plan whose US-2 has no checks (unverified in the record).
  [checked, halfChecked] = await Promise.all([prepareTemplate(), prepareTemplate({ us2Checks: [] })]);
});
afterAll(() => {
  checked?.remove();
  halfChecked?.remove();
});

type Loop = Record<string, unknown>;

async function status(dir: string, env: NodeJS.ProcessEnv): Promise<Loop[]> {
  const r = await runCli(['status', '--json'], { cwd: dir, env });
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { loops: Loop[] }).loops;
}

async function engineStatus(dir: string, env: NodeJS.ProcessEnv): Promise<Loop[]> {
  const r = await run(process.execPath, [path.join(dir, 'ralph/ralph.mjs'), 'status', '--json'], { cwd: dir, env });
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { loops: Loop[] }).loops;
}

const counts = (l: Loop | undefined) =>
  l && { verified: l.verified, reported: l.reported, unverified: l.unverified, rejected: l.rejected };
const byId = (loops: Loop[], id: string) => counts(loops.find((l) => l.id === id));

async function cards(dir: string, env: NodeJS.ProcessEnv): Promise<Array<[string, string, string | null]>> {
  const view = await startView([], { cwd: dir, env });
  const body = await getJson(view.url, '/api/prd');
  return body.cards.map((c: { id: string; state: string; verification: string | null }) => [
    c.id,
    c.state,
    c.verification,
  ]);
}

/** The commit the runner's note is attached to (the final gate's commit). */
function notedCommit(dir: string): string {
  const lines = git(dir, 'notes', '--ref=ralphkit', 'list').split('\n').filter(Boolean);
  expect(lines).toHaveLength(1);
  return lines[0].split(' ')[1];
}

/** A loop folder the runner never wrote: a state that says complete and a ledger of `verified` verdicts. */
function forgeLoop(dir: string, id: string, stories: string[]): void {
  const time = '2999-01-01T00:00:00.000Z';
  const state = {
    id,
    status: 'complete',
    pid: null,
    iteration: 1,
    maxIterations: 5,
    agent: 'claude',
    prd: 'ralph/prd.json',
    startedAt: time,
    updatedAt: time,
    costUsd: 0,
    exitCode: 0,
  };
  const ledger = stories.map((story) =>
    JSON.stringify({
      kind: 'verdict',
      time,
      loop: id,
      iteration: 1,
      story,
      commit: git(dir, 'rev-parse', 'HEAD'),
      command: null,
      exitCode: null,
      status: 'verified',
      durationMs: 1,
      outputSha256: null,
    }),
  );
  writeFiles(dir, {
    [`ralph/.runs/${id}/state.json`]: `${JSON.stringify(state)}\n`,
    [`ralph/.runs/${id}/ledger.jsonl`]: `${ledger.join('\n')}\n`,
  });
}

describe('an honest loop, then forgeries beside it', () => {
  it('status, ralph.mjs status and the dashboard show 2 verified from the record; a forged loop folder is only reported', async () => {
    const dir = copyRepo(checked);
    const env = keyEnv();
    const r = await ralph(dir, 'honest', ['5'], env);
    expect(r.code, r.output).toBe(0);
    // The runner sealed with the test's key: it passes its environment on to the engine.
    expect(statSync(path.join(env.RALPH_KEY_DIR, 'verdict.key')).mode & 0o777).toBe(0o600);
    notedCommit(dir);

    const honest = { verified: 2, reported: 0, unverified: 0, rejected: 0 };
    expect(byId(await status(dir, env), 'e2e')).toEqual(honest);
    expect(byId(await engineStatus(dir, env), 'e2e')).toEqual(honest);
    const table = await runCli(['status'], { cwd: dir, env });
    expect(table.stdout).toMatch(
      /^ID\s+STATUS\s+ITER\s+AGENT\s+ALIVE\s+COST\s+STORIES\s+VERIFIED\s+REPORTED\s+UNVERIFIED\s+REJECTED$/m,
    );
    expect(table.stdout).toMatch(/^e2e\s+complete\s+\d+\/5\s+cmd: .*\s+no\s+n\/a\s+2\/2\s+2\s+0\s+0\s+0$/m);
    expect(await cards(dir, env)).toEqual([
      ['US-1', 'verified', 'verified'],
      ['US-2', 'verified', 'verified'],
    ]);

    // Without the key that sealed it, the same record proves nothing: the ledger's word is all there is.
    const stranger = keyEnv();
    expect(byId(await status(dir, stranger), 'e2e')).toEqual({ verified: 0, reported: 2, unverified: 0, rejected: 0 });
    expect(await cards(dir, stranger)).toEqual([
      ['US-1', 'passed', 'reported'],
      ['US-2', 'passed', 'reported'],
    ]);

    forgeLoop(dir, 'forged', ['US-1', 'US-2']);
    const loops = await status(dir, env);
    expect(byId(loops, 'forged')).toEqual({ verified: 0, reported: 2, unverified: 0, rejected: 0 });
    expect(byId(loops, 'e2e')).toEqual(honest);
    expect(byId(await engineStatus(dir, env), 'forged')).toEqual({
      verified: 0,
      reported: 2,
      unverified: 0,
      rejected: 0,
    });
  });
});

describe('a record with an unverified story, then edits to the record and the ledger', () => {
  it('an edited note (US-2 changed to verified, the old mac kept) counts for nothing; a forged ledger line is reported', async () => {
    const dir = copyRepo(halfChecked);
    const env = keyEnv();
    const r = await ralph(dir, 'honest', ['5'], env);
    expect(r.code, r.output).toBe(0);
    expect(byId(await status(dir, env), 'e2e')).toEqual({ verified: 1, reported: 0, unverified: 1, rejected: 0 });

    // A ledger line claiming US-2 verified, after the record: the record says unverified, so it is only reported.
    const ledger = path.join(dir, 'ralph/.runs/e2e/ledger.jsonl');
    const line = {
      kind: 'verdict',
      time: '2999-01-01T00:00:00.000Z',
      loop: 'e2e',
      iteration: 9,
      story: 'US-2',
      commit: git(dir, 'rev-parse', 'HEAD'),
      command: null,
      exitCode: null,
      status: 'verified',
      durationMs: 1,
      outputSha256: null,
    };
    writeFiles(dir, { 'ralph/.runs/e2e/ledger.jsonl': `${readFileSync(ledger, 'utf8')}${JSON.stringify(line)}\n` });
    expect(byId(await status(dir, env), 'e2e')).toEqual({ verified: 1, reported: 1, unverified: 0, rejected: 0 });
    expect(await cards(dir, env)).toEqual([
      ['US-1', 'verified', 'verified'],
      ['US-2', 'passed', 'reported'],
    ]);

    const commit = notedCommit(dir);
    editNote(dir, commit, (doc) => {
      expect(doc.stories).toEqual({ 'US-1': 'verified', 'US-2': 'unverified' });
      doc.stories['US-2'] = 'verified';
    });
    expect(git(dir, 'notes', '--ref=ralphkit', 'show', commit)).toContain('"US-2":"verified"'); // the forgery is there
    expect(byId(await status(dir, env), 'e2e')).toEqual({ verified: 0, reported: 2, unverified: 0, rejected: 0 });
    expect(byId(await engineStatus(dir, env), 'e2e')).toEqual({ verified: 0, reported: 2, unverified: 0, rejected: 0 });
    expect(await cards(dir, env)).toEqual([
      ['US-1', 'passed', 'reported'],
      ['US-2', 'passed', 'reported'],
    ]);
  });
});
