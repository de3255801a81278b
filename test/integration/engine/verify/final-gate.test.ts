// The final gate (src/engine/verify/final-gate.ts) on real git: every check once more on a fresh checkout of the final
// commit, with the tests pinned at the plan commit. A story a later commit broke is rejected with the range that broke
// it, its claim undone on disk and committed; a gate that passes seals the verdict record; the merge queue's narrower
// passes judge only the stories they name.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runFinalGate, type GateInput } from '../../../../src/engine/verify/final-gate.js';
import { readPins } from '../../../../src/engine/verify/pin-capture.js';
import { parseRecord } from '../../../../src/engine/store/verdict-record.js';
import type { Prd } from '../../../../src/prd/types.js';
import { git } from '../../../support/repo.js';
import { commitAll, plan, readLedgerLines, readPrd, story, verifyRepo } from '../../../support/verify-repo.js';
import { readNote } from '../../../support/verdict-note.js';

// US-1's check reads a pinned script; US-2's a file of its own.
const PLAN = plan([story('US-1', { checks: ['sh test/one.sh'] }), story('US-2', { checks: ['test -f two.txt'] })]);
const FILES = { 'test/one.sh': 'grep -q done src/one.txt\n', 'src/one.txt': 'todo\n' };

/** The plan commit with its pins, then both stories done and claimed in the runner's baseline. */
async function doneRepo() {
  const r = verifyRepo(PLAN, FILES);
  const pins = await readPins(r.dir, git(r.dir, 'rev-parse', 'HEAD'), PLAN);
  const oneAt = commitAll(r.dir, { 'src/one.txt': 'done\n' });
  commitAll(r.dir, { 'two.txt': 'two\n' });
  const settled: Prd = { ...PLAN, userStories: PLAN.userStories.map((s) => ({ ...s, passes: true })) };
  const gate = (extra: Partial<GateInput> = {}) =>
    runFinalGate({
      ...r.input({ pins }),
      prd: settled,
      topLevel: r.dir,
      verifiedAt: new Map([['US-1', oneAt]]),
      shipped: new Map(),
      verdictKey: null,
      ...extra,
    });
  return { r, pins, oneAt, gate };
}

describe('runFinalGate', () => {
  it('a story a later commit broke is rejected with the range since it passed; its claim undone on disk and committed by the runner', async () => {
    const { r, oneAt, gate } = await doneRepo();
    const broke = commitAll(r.dir, { 'src/one.txt': 'todo again\n' }, 'refactor: one');

    const res = await gate();

    expect(res.passed).toBe(false);
    expect(res.commit).toBe(broke);
    expect(res.verdicts.map((v) => [v.id, v.status])).toEqual([
      ['US-1', 'rejected'],
      ['US-2', 'verified'],
    ]);
    expect(res.verdicts[0].reason).toBe(
      `the final gate at ${broke.slice(0, 7)}: check \`sh test/one.sh\` exited 1; it passed at ${oneAt.slice(0, 7)}, so a commit since broke it (git log --oneline ${oneAt.slice(0, 7)}..${broke.slice(0, 7)})`,
    );
    expect(readPrd(r).userStories.map((s) => s.passes)).toEqual([false, true]);
    expect(git(r.dir, 'log', '-1', '--format=%s')).toBe('chore(ralph): final gate rejects US-1 (check failed)');
    expect(res.runnerCommit).toBe(git(r.dir, 'rev-parse', 'HEAD'));
    expect(readFileSync(r.progressPath, 'utf8')).toContain('US-1');
    expect(
      readLedgerLines(r)
        .filter((l) => l.kind === 'verdict')
        .map((l) => [l.story, l.status, l.gate]),
    ).toEqual([
      ['US-1', 'rejected', true],
      ['US-2', 'verified', true],
    ]);
  });

  it('a pinned test weakened after the plan commit does not pass the gate: the pinned one runs', async () => {
    const { r, gate } = await doneRepo();
    commitAll(r.dir, { 'test/one.sh': 'exit 0\n', 'src/one.txt': 'todo\n' }, 'chore: simplify the test');
    const res = await gate();
    expect(res.passed).toBe(false);
    expect(res.verdicts[0]).toMatchObject({
      id: 'US-1',
      status: 'rejected',
      reason: expect.stringContaining('test/one.sh'),
    });
  });

  it('a gate that passes seals the verdict record on its commit with the key (weak stories named), and leaves the plan as it was', async () => {
    const { r, gate } = await doneRepo();
    const key = randomBytes(32);
    const before = readFileSync(r.prdPath, 'utf8');
    const head = git(r.dir, 'rev-parse', 'HEAD');

    const res = await gate({ verdictKey: key, weak: new Set(['US-2']) });

    expect(res).toMatchObject({ passed: true, interrupted: false, commit: head, runnerCommit: null, weak: ['US-2'] });
    const record = parseRecord(readNote(r.dir, head)!, head, key);
    expect(record).toMatchObject({
      loop: 'L1',
      commit: head,
      stories: { 'US-1': 'verified', 'US-2': 'verified' },
      weak: ['US-2'],
    });
    // The same note read with another key is no record at all.
    expect(parseRecord(readNote(r.dir, head)!, head, randomBytes(32))).toBeNull();
    expect(readFileSync(r.prdPath, 'utf8')).toBe(before);
    expect(git(r.dir, 'rev-parse', 'HEAD')).toBe(head);
  });

  it("the merge queue's narrower passes: onlyStories judges the stories named, onlyPassing those the plan says pass", async () => {
    const { r, gate } = await doneRepo();
    commitAll(r.dir, { 'src/one.txt': 'todo again\n' }, 'refactor: one');

    const two = await gate({ onlyStories: ['US-2'], label: 'merge queue: US-2 alone' });
    expect(two.verdicts.map((v) => [v.id, v.status])).toEqual([['US-2', 'verified']]);
    expect(two.passed).toBe(true);
    expect(r.logs).toContainEqual(expect.stringMatching(/^info: merge queue: US-2 alone on a fresh checkout of /));

    const passing: Prd = {
      ...PLAN,
      userStories: [
        { ...PLAN.userStories[0], passes: false },
        { ...PLAN.userStories[1], passes: true },
      ],
    };
    const merged = await gate({ prd: passing, onlyPassing: true });
    expect(merged.verdicts.map((v) => v.id)).toEqual(['US-2']);
  });

  it('seal: false (a pass over a few stories) leaves the verdict record of the commit as it was', async () => {
    const { r, gate } = await doneRepo();
    const head = git(r.dir, 'rev-parse', 'HEAD');
    const key = randomBytes(32);
    const all = await gate({ verdictKey: key });
    expect(all.passed).toBe(true);
    const sealed = readNote(r.dir, head);
    expect(parseRecord(sealed!, head, key)?.stories).toEqual({ 'US-1': 'verified', 'US-2': 'verified' });

    const one = await gate({ onlyStories: ['US-2'], seal: false, verdictKey: key });
    expect(one.passed).toBe(true);
    expect(one.verdicts.map((v) => v.id)).toEqual(['US-2']);
    // Written anyway, the record would now say only US-2 was verified here.
    expect(readNote(r.dir, head)).toBe(sealed);
  });

  it('runs two stories side by side; a check that failed while another ran is judged again alone, and that run decides', async () => {
    // The lock is held by whichever of US-1 and US-2 comes first; it waits (up to 20 s) until the other has been
    // turned away, so the two overlap or the holder fails. The one turned away passes when judged again alone. US-3
    // needs a checkout of its own (mayChange), so it runs after them, alone: its failure is not run again.
    const lock = path.join(mkdtempSync(path.join(tmpdir(), 'gate-lock-')), 'held');
    const script = [
      `if mkdir '${lock}' 2>/dev/null; then`,
      `  i=0; while [ ! -e '${lock}.seen' ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done`,
      `  rmdir '${lock}'; test -e '${lock}.seen'`,
      `else touch '${lock}.seen'; exit 1; fi`,
      '',
    ].join('\n');
    const count = `${lock}.count`;
    const prd = plan(
      [
        story('US-1', { checks: ['sh test/port.sh one'] }),
        story('US-2', { checks: ['sh test/port.sh two'] }),
        story('US-3', { checks: ['exit 3'], mayChange: ['test/port.sh'] }),
      ],
      { checks: [`echo ran >> '${count}'`] },
    );
    const r = verifyRepo(prd, { 'test/port.sh': script });
    const res = await gateOn(r, prd);

    expect(res.verdicts.map((v) => [v.id, v.status])).toEqual([
      ['US-1', 'verified'],
      ['US-2', 'verified'],
      ['US-3', 'rejected'],
    ]);
    const again = r.logs.filter((l) => l.includes('judged again on its own'));
    expect(again).toHaveLength(1);
    const turnedAway = again[0].match(
      /^info: (US-[12]): check `sh test\/port.sh (one|two)` failed while another check ran; judged again on its own$/,
    )?.[1];
    expect(turnedAway).toBeDefined();
    const checks = readLedgerLines(r).filter((l) => l.kind === 'check');
    // The one turned away: a failing run beside the other, then a passing one alone; the holder ran once.
    const own = (id: string) => checks.filter((l) => l.story === id && l.scope === 'story').map((l) => l.exitCode);
    const holder = turnedAway === 'US-1' ? 'US-2' : 'US-1';
    expect(own(turnedAway ?? '')).toEqual([1, 0]);
    expect(own(holder)).toEqual([0]);
    expect(own('US-3')).toEqual([3]);
    // The plan's check: once for the two stories side by side (asked for by both at once), once in US-3's checkout,
    // once in the fresh checkout of the run alone.
    expect(readFileSync(count, 'utf8')).toBe('ran\nran\nran\n');
    // Verdict lines in the plan's order, whichever finished first.
    expect(
      readLedgerLines(r)
        .filter((l) => l.kind === 'verdict')
        .map((l) => l.story),
    ).toEqual(['US-1', 'US-2', 'US-3']);
  });

  it('the run alone is in a fresh checkout: what the first run left in its checkout does not make it pass', async () => {
    // US-1's code passes once it has left a file in the checkout; the two checks wait for each other, so US-1's first
    // run fails beside US-2's. Judged again in the same checkout it would pass; in a fresh one it fails again.
    const meet = path.join(mkdtempSync(path.join(tmpdir(), 'gate-meet-')), 'at');
    const script = [
      `touch '${meet}.'"$1"`,
      `i=0; while { [ ! -e '${meet}.one' ] || [ ! -e '${meet}.two' ]; } && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done`,
      `test -e '${meet}.one' && test -e '${meet}.two'`,
      '',
    ].join('\n');
    const prd = plan([
      story('US-1', { checks: ['test -e left-here || { touch left-here; sh test/meet.sh one; exit 1; }'] }),
      story('US-2', { checks: ['sh test/meet.sh two'] }),
    ]);
    const r = verifyRepo(prd, { 'test/meet.sh': script });
    const res = await gateOn(r, prd);

    expect(res.verdicts.map((v) => [v.id, v.status])).toEqual([
      ['US-1', 'rejected'],
      ['US-2', 'verified'],
    ]);
    expect(r.logs).toContainEqual(
      expect.stringMatching(/^info: US-1: check .* failed while another check ran; judged again on its own$/),
    );
    const us1 = readLedgerLines(r).filter((l) => l.kind === 'check' && l.story === 'US-1');
    expect(us1.map((l) => l.exitCode)).toEqual([1, 1]);
  });

  it('a story judged again is guarded like any pass: what its run changed in the trusted files fells every verdict', async () => {
    // US-1 fails beside US-2 (they wait for each other), then, judged again, passes and plants what the runner trusts;
    // only the session of that run sees it when it closes. US-2, verified in the first pass, falls with it.
    const at = path.join(mkdtempSync(path.join(tmpdir(), 'gate-plant-')), 'at');
    const meet = [
      `touch '${at}.'"$1"`,
      `i=0; while { [ ! -e '${at}.one' ] || [ ! -e '${at}.two' ]; } && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done`,
      '',
    ].join('\n');
    const prd = plan([
      story('US-1', {
        checks: [
          `if [ -e '${at}.first' ]; then touch '${at}.planted'; exit 0; fi; touch '${at}.first'; sh test/meet.sh one; exit 1`,
        ],
      }),
      story('US-2', { checks: ['sh test/meet.sh two'] }),
    ]);
    const r = verifyRepo(prd, { 'test/meet.sh': meet });
    const res = await gateOn(r, prd, {
      guardTrusted: () => (existsSync(`${at}.planted`) ? 'the checks changed .git/config (core.fsmonitor)' : undefined),
    });

    expect(r.logs).toContainEqual(expect.stringMatching(/^info: US-1: check .* judged again on its own$/));
    expect(res.passed).toBe(false);
    expect(res.verdicts.map((v) => [v.id, v.status])).toEqual([
      ['US-1', 'rejected'],
      ['US-2', 'rejected'],
    ]);
    expect(res.verdicts[1].reason).toContain('core.fsmonitor');
  });

  it('in place, in your working tree: one story at a time, and a failure is not judged again there', async () => {
    // US-1 fails once and leaves a file that would make a second run in the same tree pass; US-2 records when it ran.
    const order = path.join(mkdtempSync(path.join(tmpdir(), 'gate-order-')), 'order');
    const prd = plan([
      story('US-1', {
        checks: [
          `echo s1 >> '${order}'; sleep 0.2; echo e1 >> '${order}'; test -e left-here || { touch left-here; exit 1; }`,
        ],
      }),
      story('US-2', { checks: [`echo s2 >> '${order}'; sleep 0.2; echo e2 >> '${order}'`] }),
    ]);
    const r = verifyRepo(prd);
    const res = await gateOn(r, prd, { inPlace: true });

    expect(res.verdicts.map((v) => [v.id, v.status])).toEqual([
      ['US-1', 'rejected'],
      ['US-2', 'verified'],
    ]);
    expect(readFileSync(order, 'utf8')).toBe('s1\ne1\ns2\ne2\n');
    expect(r.logs.filter((l) => l.includes('judged again'))).toEqual([]);
  });

  it('an interrupt stops before the next story and the next checkout: nothing decided, nothing more run', async () => {
    // US-1 and US-2 share a checkout; US-3 needs its own. The runner is interrupted once US-1's check has passed.
    const prd = plan([
      story('US-1', { checks: ['true'] }),
      story('US-2', { checks: ['true'], mayChange: ['a.txt'] }),
      story('US-3', { checks: ['true'], mayChange: ['b.txt'] }),
    ]);
    const r = verifyRepo(prd);
    const stop = new AbortController();
    const res = await gateOn(r, prd, {
      signal: stop.signal,
      log: (level, message) => {
        r.logs.push(`${level}: ${message}`);
        if (message.startsWith('US-1: check')) stop.abort();
      },
    });

    expect(res).toMatchObject({ passed: false, interrupted: true, verdicts: [] });
    expect(r.logs.filter((l) => l.includes('verifying in a fresh checkout'))).toHaveLength(1);
    expect(readLedgerLines(r).map((l) => l.story)).toEqual(['US-1']);
  });
});

/** The final gate on `r` with every story of `prd` claimed. */
function gateOn(r: ReturnType<typeof verifyRepo>, prd: Prd, extra: Partial<GateInput> = {}) {
  return runFinalGate({
    ...r.input(),
    ...extra,
    prd: { ...prd, userStories: prd.userStories.map((s) => ({ ...s, passes: true })) },
    topLevel: r.dir,
    verifiedAt: new Map(),
    shipped: new Map(),
    verdictKey: null,
  });
}
