import { describe, expect, it, onTestFinished } from 'vitest';
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { git, gitdir, testdir, writeFiles } from '../../support/repo.js';
import { keyEnv, sealNote, useKeyEnv } from '../../support/verdict-note.js';
import { commitPlan, plan, writeLedger, writeLoop, writePlan, writeProgress } from '../../support/view-fixtures.js';
import { getJson, openEvents, request } from '../../support/view-http.js';
import { startViewServer, type ViewServerOptions } from '../../../src/view/server.js';
import { PROGRESS_HEAD_BYTES, PROGRESS_TAIL_BYTES } from '../../../src/view/snapshot.js';
import { RalphkitError } from '../../../src/errors.js';
import {
  appendLedger,
  readLedger,
  summariseLedger,
  type LedgerLine,
  type VerdictStatus,
} from '../../../src/engine/store/ledger.js';
import { readLoopSummaries } from '../../../src/engine/store/summaries.js';
import { ralphkitCommand } from '../../../src/util/invocation.js';

async function serve(repo: string, options: Partial<ViewServerOptions> = {}) {
  const server = await startViewServer({ cwd: repo, port: 0, ...options });
  onTestFinished(() => server.close());
  return server;
}

function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid!;
}

describe('ralphkit view server: JSON endpoints', () => {
  it('/api/prd: the plan plus each story’s verification state, column and ledger', async () => {
    const repo = gitdir();
    const env = keyEnv();
    useKeyEnv(env);
    const prd = plan(4);
    prd.userStories[0].passes = true;
    prd.userStories[1].passes = true;
    writePlan(repo, prd);
    commitPlan(repo);
    writeLoop(repo, { id: 'L1', status: 'complete', exitCode: 0, branch: 'ralph/fixture' });
    sealNote(
      repo,
      {
        loop: 'L1',
        commit: git(repo, 'rev-parse', 'HEAD'),
        time: '2026-11-29T10:06:00.000Z',
        stories: { 'US-001': 'verified' },
      },
      env,
    );
    writeLedger(repo, 'L1', [
      { time: '2026-11-29T10:00:00Z', loop: 'L1', iteration: 1, story: 'US-001', command: 'npm test', exitCode: 0 },
      {
        time: '2026-11-29T10:00:01Z',
        loop: 'L1',
        iteration: 1,
        story: 'US-001',
        command: null,
        exitCode: null,
        status: 'verified',
      },
      { time: '2026-11-29T10:05:00Z', loop: 'L1', iteration: 2, story: 'US-003', command: 'npm test', exitCode: 1 },
      {
        time: '2026-11-29T10:05:01Z',
        loop: 'L1',
        iteration: 2,
        story: 'US-003',
        command: null,
        exitCode: null,
        status: 'rejected',
        reason: 'check `npm test` exited 1',
      },
    ]);
    const server = await serve(repo);
    const body = await getJson(server.url, '/api/prd');
    expect(body).toMatchObject({
      file: 'ralph/prd.json',
      exists: true,
      error: null,
      prd: { project: 'Fixture', branchName: 'ralph/fixture' },
    });
    expect(body.prd.userStories).toHaveLength(4);
    expect(body.cards.map((c: any) => [c.id, c.state, c.column, c.next])).toEqual([
      ['US-001', 'verified', 0, false],
      ['US-002', 'passed', 0, false],
      ['US-003', 'rejected', 1, true],
      ['US-004', 'open', 1, false],
    ]);
    expect(body.cards[2]).toMatchObject({ verification: 'rejected', reason: 'check `npm test` exited 1' });
    expect(body.cards[2].ledger[0]).toMatchObject({
      time: '2026-11-29T10:05:00Z',
      loop: 'L1',
      iteration: 2,
      story: 'US-003',
      command: 'npm test',
      exitCode: 1,
      durationMs: 1200,
      status: null,
    });
    expect(body.cards[2].ledger[1]).toMatchObject({
      kind: 'verdict',
      command: null,
      status: 'rejected',
      reason: 'check `npm test` exited 1',
    });
    expect(body.summary).toEqual({ total: 4, passed: 2, verified: 1, reported: 0, rejected: 1, open: 1, skipped: 0 });
  });

  it('/api/prd: a missing plan and an unreadable one are reported, not thrown', async () => {
    const repo = testdir();
    const server = await serve(repo);
    expect(await getJson(server.url, '/api/prd')).toEqual({
      file: 'ralph/prd.json',
      exists: false,
      error: null,
      prd: null,
    });
    writeFiles(repo, { 'ralph/prd.json': '{"branchName": "x", "userStories": [' });
    expect(await getJson(server.url, '/api/prd')).toMatchObject({
      exists: true,
      prd: null,
      error: expect.stringContaining('ralph/prd.json is not valid JSON'),
    });
    writeFiles(repo, { 'ralph/prd.json': '{"branchName": "x", "userStories": {}}' });
    expect((await getJson(server.url, '/api/prd')).error).toMatch(/userStories must be a list/);
  });

  it('/api/prd honours --prd', async () => {
    const repo = testdir();
    writePlan(repo, plan(2, { project: 'Elsewhere' }), 'plans/other.json');
    const server = await serve(repo, { prd: 'plans/other.json' });
    expect(await getJson(server.url, '/api/prd')).toMatchObject({
      file: 'plans/other.json',
      prd: { project: 'Elsewhere' },
    });
  });

  it('/api/progress with --prd reads the log beside that plan, as the runner writes it', async () => {
    const repo = testdir();
    writePlan(repo, plan(2), 'plans/other.json');
    writeProgress(repo, '# Log\n## 2026-11-29 - US-001\n- the default plan\n');
    // A plan not named prd.json keeps its own log beside it (<name>.progress.txt), so two plans never share one.
    writeFiles(repo, {
      'plans/progress.txt': "# Log\n## 2026-11-29 - US-009\n- not this plan's\n",
      'plans/other.progress.txt': '# Log\n## 2026-11-29 - US-002\n- the other plan\n',
    });
    const server = await serve(repo, { prd: 'plans/other.json' });
    const body = await getJson(server.url, '/api/progress');
    expect(body).toMatchObject({ file: 'plans/other.progress.txt', exists: true, omittedBytes: 0 });
    expect(body.log.sections[0].blocks).toEqual([{ kind: 'list', items: [{ text: 'the other plan', depth: 0 }] }]);
  });

  it('/api/progress: ralph/progress.txt in sections, with its size', async () => {
    const repo = testdir();
    const text = '# Log\n## Codebase Patterns\n- p\n## 2026-11-29 - US-001\n- done\n';
    writeProgress(repo, text);
    const server = await serve(repo);
    const body = await getJson(server.url, '/api/progress');
    expect(body).toMatchObject({ file: 'ralph/progress.txt', exists: true, size: text.length, omittedBytes: 0 });
    expect(body.log.patterns.title).toBe('Codebase Patterns');
    expect(body.log.sections.map((s: any) => s.title)).toEqual(['2026-11-29 - US-001']);
  });

  it('/api/progress of a log too long to send: its head and newest entries, and how many bytes are left out', async () => {
    const repo = testdir();
    const head = '# Progress log\n## Codebase Patterns\n- run npm test\n## Sessions\n';
    const entries = Array.from(
      { length: 2000 },
      (_, i) =>
        `## 2026-11-29 - entry ${i}\n${'- a note of about a hundred bytes, repeated to make the log long '.repeat(4)}\n`,
    );
    const text = head + entries.join('');
    writeProgress(repo, text);
    const server = await serve(repo);
    const body = await getJson(server.url, '/api/progress');
    expect(text.length).toBeGreaterThan(2 * (PROGRESS_HEAD_BYTES + PROGRESS_TAIL_BYTES));
    expect(body).toMatchObject({ exists: true, size: text.length });
    expect(body.log.patterns.title).toBe('Codebase Patterns');
    const titles: string[] = body.log.sections.map((s: any) => s.title);
    expect(titles.at(-1)).toBe('2026-11-29 - entry 1999');
    // Whole entries from the newest back, as many as the tail holds; what is left out is counted exactly.
    const first = Number(/entry (\d+)$/.exec(titles[0])![1]);
    expect(titles).toEqual(entries.slice(first).map((e) => e.slice(3, e.indexOf('\n'))));
    const shown = Buffer.byteLength(entries.slice(first).join(''));
    expect(shown).toBeLessThanOrEqual(PROGRESS_TAIL_BYTES);
    const headKept = text.lastIndexOf('\n', PROGRESS_HEAD_BYTES - 1) + 1; // all ASCII: characters are bytes
    expect(body.omittedBytes).toBe(text.length - headKept - shown);
    expect(JSON.stringify(body).length).toBeLessThan(2 * (PROGRESS_HEAD_BYTES + PROGRESS_TAIL_BYTES));
  });

  it('/api/loops: every loop under ralph/.runs, newest first, with a pid check', async () => {
    const repo = testdir();
    writeLoop(repo, {
      id: 'alive',
      iteration: 3,
      maxIterations: 10,
      pid: process.pid,
      costUsd: 1.5,
      updatedAt: '2026-11-29T10:00:02Z',
      startedAt: '2026-11-29T09:00:02Z',
    });
    writeLoop(repo, { id: 'crashed', status: 'running', pid: deadPid(), startedAt: '2026-11-29T09:00:01Z' });
    writeLoop(repo, {
      id: 'done',
      status: 'complete',
      pid: process.pid,
      exitCode: 0,
      startedAt: '2026-11-29T09:00:00Z',
      message: 'all stories verified',
    });
    writeFiles(repo, {
      'ralph/.runs/half/state.json': '{"id":',
      'ralph/.runs/empty/ledger.jsonl': '',
      'ralph/.runs/locks/abc.lock': '{}',
    });
    const server = await serve(repo);
    const { loops } = await getJson(server.url, '/api/loops');
    // A corrupt state.json is listed (after the readable ones), as `ralphkit status` lists it; empty/ and locks/ are not loops.
    expect(loops.map((l: any) => [l.id, l.status, l.alive])).toEqual([
      ['alive', 'running', true],
      ['crashed', 'dead', false],
      ['done', 'complete', false],
      ['half', 'unreadable', false],
    ]);
    expect(loops[3].message).toMatch(/could not read ralph\/\.runs\/half\/state\.json \(not valid JSON/);
    expect(loops[0]).toEqual({
      id: 'alive',
      status: 'running',
      iteration: 3,
      maxIterations: 10,
      agent: 'claude',
      prd: 'ralph/prd.json',
      costUsd: 1.5,
      startedAt: '2026-11-29T09:00:02Z',
      updatedAt: '2026-11-29T10:00:02Z',
      exitCode: null,
      pid: process.pid,
      message: null,
      alive: true,
      inSession: false,
      parallel: null,
    });
    expect(loops[2].message).toBe('all stories verified');
  });
});

// One ledger and one sealed record, read by `ralphkit status` (readLoopSummaries) and by the dashboard (/api/prd): same verdicts.
describe('ralphkit view server and ralphkit status agree', () => {
  const at = (minute: number) => `2026-11-29T10:${String(minute).padStart(2, '0')}:00.000Z`;
  const base = (story: string, minute: number, iteration: number) => ({
    time: at(minute),
    loop: 'L1',
    iteration,
    story,
    commit: 'c0ffee',
  });
  const check = (story: string, minute: number, exitCode: number, extra: object = {}): LedgerLine => ({
    ...base(story, minute, 1),
    kind: 'check',
    scope: 'prd',
    command: 'npm test',
    exitCode,
    signal: null,
    timedOut: false,
    durationMs: 5,
    outputSha256: 'h',
    ...extra,
  });
  const verdict = (story: string, minute: number, status: VerdictStatus): LedgerLine => ({
    ...base(story, minute, 1),
    kind: 'verdict',
    command: null,
    exitCode: null,
    status,
    durationMs: 5,
    outputSha256: null,
    ...(status === 'verified' ? {} : { reason: `${story} ${status}` }),
  });
  const LEDGER: LedgerLine[] = [
    check('US-001', 1, 0),
    verdict('US-001', 1, 'verified'),
    verdict('US-002', 2, 'rejected'),
    verdict('US-002', 3, 'verified'), // claimed again, then verified
    verdict('US-003', 2, 'verified'),
    verdict('US-003', 4, 'rejected'), // verified, later claimed again and rejected
    verdict('US-004', 5, 'unverified'), // no checks at all
    check('US-005', 6, 0),
    check('US-005', 6, 1), // runner killed before it decided
    verdict('US-006', 7, 'verified'),
    check('US-006', 8, 1, { exitCode: null, signal: 'SIGTERM', aborted: true }), // Ctrl-C decided nothing
    verdict('US-007', 9, 'rejected'),
    verdict('US-007', 9, 'verified'), // same time: the later line
    verdict('US-008', 11, 'rejected'),
    verdict('US-008', 10, 'verified'), // file order is not time order
  ];

  it('gives every story the same verdict and the same counts', async () => {
    const repo = gitdir();
    const env = keyEnv();
    useKeyEnv(env);
    const prd = plan(8);
    prd.userStories.forEach((s) => (s.passes = true));
    writePlan(repo, prd);
    commitPlan(repo);
    writeLoop(repo, { id: 'L1', status: 'complete', exitCode: 0, branch: 'ralph/fixture' });
    appendLedger(path.join(repo, 'ralph/.runs/L1/ledger.jsonl'), LEDGER);
    // The record confirms some of what the ledger says: US-002 and US-007 stay a ledger's word.
    const sealed = {
      'US-001': 'verified',
      'US-003': 'verified',
      'US-004': 'unverified',
      'US-006': 'verified',
    } as const;
    sealNote(repo, { loop: 'L1', commit: git(repo, 'rev-parse', 'HEAD'), time: at(3), stories: sealed }, env);

    const [loop] = readLoopSummaries(repo);
    const { cards } = await getJson((await serve(repo)).url, '/api/prd');
    const shown = (status: VerdictStatus | 'reported') => cards.filter((c: any) => c.verification === status).length;
    expect({
      verified: shown('verified'),
      reported: shown('reported'),
      unverified: shown('unverified'),
      rejected: shown('rejected'),
    }).toEqual({
      verified: loop.verified,
      reported: loop.reported,
      unverified: loop.unverified,
      rejected: loop.rejected,
    });
    const engine = summariseLedger(readLedger(path.join(repo, 'ralph/.runs/L1/ledger.jsonl'))).stories;
    expect(cards.filter((c: any) => c.verification === 'rejected').map((c: any) => c.reason)).toEqual(
      ['US-003', 'US-008'].map((id) => engine[id].reason),
    );
    // And what that is, so the two cannot agree on something wrong: a later rejection (US-003) beats the record.
    expect(cards.map((c: any) => c.verification)).toEqual([
      'verified',
      'reported',
      'rejected',
      'unverified',
      null,
      'verified',
      'reported',
      'rejected',
    ]);
    expect(loop).toMatchObject({ verified: 2, reported: 2, unverified: 1, rejected: 2 });
  });

  it('a ledger that cannot be read is no verdicts for either, not a crash', async () => {
    const repo = testdir();
    writePlan(repo, plan(1));
    writeLoop(repo, { id: 'L1', status: 'complete', exitCode: 0 });
    mkdirSync(path.join(repo, 'ralph/.runs/L1/ledger.jsonl')); // EISDIR on read, whoever reads it
    const server = await serve(repo);
    expect((await getJson(server.url, '/api/loops')).loops.map((l: any) => l.id)).toEqual(['L1']);
    expect((await getJson(server.url, '/api/prd')).cards[0].verification).toBeNull();
    expect(readLoopSummaries(repo)[0]).toMatchObject({
      id: 'L1',
      verified: 0,
      reported: 0,
      unverified: 0,
      rejected: 0,
    });
  });

  it('lists the same loops, in the same order, with the same status and liveness', async () => {
    const repo = testdir();
    writePlan(repo, plan(2));
    writeLoop(repo, { id: 'live', pid: process.pid, startedAt: '2026-11-29T09:00:03Z' });
    writeLoop(repo, { id: 'killed', pid: deadPid(), startedAt: '2026-11-29T09:00:02Z' });
    // A pid the OS may have handed to another process: whatever the engine decides, the page must say the same.
    writeFiles(repo, {
      'ralph/.runs/reused/state.json': JSON.stringify({
        id: 'reused',
        agent: 'claude',
        prd: 'ralph/prd.json',
        iteration: 1,
        maxIterations: 3,
        status: 'running',
        pid: process.pid,
        pidStart: 1,
        startedAt: '2026-11-29T09:00:01Z',
        updatedAt: '2026-11-29T09:00:01Z',
        costUsd: 0,
        exitCode: null,
      }),
    });
    writeLoop(repo, { id: 'ended', status: 'max-iterations', exitCode: 1, startedAt: '2026-11-29T09:00:00Z' });

    const { loops } = await getJson((await serve(repo)).url, '/api/loops');
    const status = readLoopSummaries(repo);
    expect(loops.map((l: any) => [l.id, l.status, l.alive])).toEqual(status.map((l) => [l.id, l.status, l.alive]));
    expect(loops.filter((l: any) => l.id !== 'reused').map((l: any) => [l.id, l.status, l.alive])).toEqual([
      ['live', 'running', true],
      ['killed', 'dead', false],
      ['ended', 'max-iterations', false],
    ]);
  });
});

describe('ralphkit view server: what it refuses', () => {
  it.each([
    '/package.json',
    '/../package.json',
    '/%2e%2e/package.json',
    '/%2E%2E%2Fpackage.json',
    '/..%2f..%2fetc%2fpasswd',
    '/api/../../package.json',
    '//etc/passwd',
    '/src/view/page/app.js',
    '/page/index.html',
    '/ralph/prd.json',
    '/api/prd/',
    '/api/nope',
    '/app.js/',
    '/index.html%00.js',
  ])('404 for %s', async (path) => {
    const repo = testdir();
    writePlan(repo, plan(1));
    const server = await serve(repo);
    const res = await request(server.url, path);
    expect(res.status).toBe(404);
    expect(res.body).toBe('not found\n');
  });

  it('serves only GET and HEAD', async () => {
    const server = await serve(testdir());
    const res = await request(server.url, '/api/prd', { method: 'POST' });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    const head = await request(server.url, '/api/prd', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
  });

  it('answers only loopback Host names when bound to loopback (DNS rebinding)', async () => {
    const server = await serve(testdir());
    expect((await request(server.url, '/api/prd', { headers: { Host: 'evil.example' } })).status).toBe(403);
    expect((await request(server.url, '/api/prd', { headers: { Host: `localhost:${server.port}` } })).status).toBe(200);
  });

  it('a port in use is a clear error naming --port, with the next port as a hint', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
    const port = (blocker.address() as net.AddressInfo).port;
    const err = await startViewServer({ cwd: testdir(), port }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RalphkitError);
    expect((err as RalphkitError).message).toContain(`port ${port} on 127.0.0.1 is already in use`);
    expect((err as RalphkitError).message).toContain('--port');
    expect((err as RalphkitError).hint).toBe(ralphkitCommand(`view --port ${port + 1}`));
    expect((err as RalphkitError).exitCode).toBe(2);
  });

  it('binds 127.0.0.1 by default', async () => {
    const server = await serve(testdir());
    expect(server.host).toBe('127.0.0.1');
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/`);
  });
});

describe('ralphkit view server: the page', () => {
  it.each([
    ['/', 'text/html; charset=utf-8', '<script type="module" src="/app.js">'],
    ['/index.html', 'text/html; charset=utf-8', '<main class="layout">'],
    ['/app.js', 'text/javascript; charset=utf-8', "new EventSource('/api/events')"],
    ['/board.js', 'text/javascript; charset=utf-8', 'export function renderBoard'],
    ['/style.css', 'text/css; charset=utf-8', '.card'],
    ['/favicon.svg', 'image/svg+xml', '<svg'],
  ])('%s', async (path, type, snippet) => {
    const server = await serve(testdir());
    const res = await request(server.url, path);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(type);
    expect(res.body).toContain(snippet);
    // Defence in depth behind textContent: even injected markup could not run a script.
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('the page never hands plan data to innerHTML or similar', async () => {
    const server = await serve(testdir());
    for (const file of ['/app.js', '/dom.js', '/board.js', '/detail.js', '/side.js', '/workers.js']) {
      const { body } = await request(server.url, file);
      expect(body).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/);
    }
  });
});

describe('ralphkit view server: live updates', () => {
  it('sends the current state on connect, then what changed', async () => {
    const repo = gitdir();
    const env = keyEnv();
    useKeyEnv(env);
    writePlan(repo, plan(2));
    const server = await serve(repo);
    const events = await openEvents(server.url);
    onTestFinished(() => events.close());
    await events.waitFor((e) => e.event === 'prd' && e.data.prd?.userStories.length === 2);
    await events.waitFor((e) => e.event === 'progress');
    await events.waitFor((e) => e.event === 'loops' && e.data.loops.length === 0);

    const prd = plan(2);
    prd.userStories[1].passes = true;
    writePlan(repo, prd);
    await events.waitFor((e) => e.event === 'prd' && e.data.cards?.[1].state === 'passed');
    writeLoop(repo, { id: 'L1', iteration: 1 });
    await events.waitFor((e) => e.event === 'loops' && e.data.loops[0]?.id === 'L1');
    writeProgress(repo, '## 2026 - US-002\n- done\n');
    await events.waitFor((e) => e.event === 'progress' && e.data.log.sections[0]?.title === '2026 - US-002');
    writeLedger(repo, 'L1', [
      {
        time: '2026-11-29T10:00:00Z',
        loop: 'L1',
        iteration: 1,
        story: 'US-002',
        command: null,
        exitCode: null,
        status: 'verified',
      },
    ]);
    await events.waitFor(
      (e) => e.event === 'prd' && e.data.cards?.[1].verification === 'reported' && e.data.cards[1].state === 'passed',
    );
    // The runner's end: the sealed record, then state.json saying complete.
    commitPlan(repo);
    sealNote(
      repo,
      {
        loop: 'L1',
        commit: git(repo, 'rev-parse', 'HEAD'),
        time: '2026-11-29T10:00:01.000Z',
        stories: { 'US-001': 'verified', 'US-002': 'verified' },
      },
      env,
    );
    writeLoop(repo, { id: 'L1', iteration: 1, status: 'complete', exitCode: 0, branch: 'ralph/fixture' });
    await events.waitFor((e) => e.event === 'prd' && e.data.cards?.[1].state === 'verified');
  });

  it('the polling fallback alone notices an atomic rename', async () => {
    const repo = testdir();
    writePlan(repo, plan(1));
    const server = await serve(repo, { fsWatch: false, pollMs: 100 });
    const events = await openEvents(server.url);
    onTestFinished(() => events.close());
    await events.waitFor((e) => e.event === 'prd');
    writePlan(repo, plan(1, { project: 'Renamed' }));
    await events.waitFor((e) => e.event === 'prd' && e.data.prd?.project === 'Renamed');
  });

  it('notices a loop process dying even when no file changes', async () => {
    const repo = testdir();
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    onTestFinished(() => void child.kill('SIGKILL'));
    writeLoop(repo, { id: 'L1', pid: child.pid! });
    const server = await serve(repo, { pollMs: 100 });
    const events = await openEvents(server.url);
    onTestFinished(() => events.close());
    await events.waitFor((e) => e.event === 'loops' && e.data.loops[0]?.alive === true);
    child.kill('SIGKILL');
    await events.waitFor((e) => e.event === 'loops' && e.data.loops[0]?.alive === false);
  });
});
