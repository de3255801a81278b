// The end of a loop, announced (SPEC §10): a desktop notification through notify-send, the user's --on-exit command
// with the loop's ending in its environment, and a POST to a webhook, none of which can change the exit code or hold
// the runner past its bound, and a webhook URL that never shows anywhere. The installed ralph.sh, fake agents, a fake
// notify-send on PATH and webhook servers on 127.0.0.1. Needs `npm run build` first (npm test does it).
import { chmodSync, existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { testdir } from '../support/repo.js';
import { agent, jsonEvents, loopRepo, onlyState, ralph, startRalph } from '../support/loop-repo.js';
import { goneWithin, until } from '../support/process.js';

const FAST = ['--pause', '0'];
const warnings = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('ralph: warning:'));

/** A folder on PATH holding a notify-send that records its arguments, one JSON array per call. */
function fakeNotifySend(): { bin: string; calls: () => string[][] } {
  const bin = testdir('ralphkit-bin-');
  const log = path.join(bin, 'calls.jsonl');
  writeFileSync(
    path.join(bin, 'notify-send'),
    `#!/usr/bin/env node\nrequire('fs').appendFileSync(${JSON.stringify(log)}, JSON.stringify(process.argv.slice(2)) + '\\n');\n`,
  );
  chmodSync(path.join(bin, 'notify-send'), 0o755);
  const calls = () =>
    existsSync(log)
      ? readFileSync(log, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as string[])
      : [];
  return { bin, calls };
}

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A webhook on 127.0.0.1 that records each request and answers with `status`, or never answers ('hang'). */
async function webhookServer(answer: number | 'hang'): Promise<{ url: (p: string) => string; received: Received[] }> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      if (answer !== 'hang') res.writeHead(answer, { 'content-type': 'text/plain' }).end(answer === 200 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => {
    server.closeAllConnections();
    server.close();
  });
  const { port } = server.address() as AddressInfo;
  return { url: (p) => `http://127.0.0.1:${port}${p}`, received };
}

/** Every file under `dir` (but .git) whose bytes contain `needle`. */
function filesContaining(dir: string, needle: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name);
      if (name === '.git' && d === dir) continue;
      if (statSync(p).isDirectory()) walk(p);
      else if (readFileSync(p).includes(needle)) found.push(path.relative(dir, p));
    }
  };
  walk(dir);
  return found;
}

describe('--notify', () => {
  it('shows one desktop notification with the summary through notify-send, as an argument list', async () => {
    const dir = loopRepo({ stories: 1 });
    const notify = fakeNotifySend();
    const r = await ralph(dir, ['--agent-cmd', agent('worker'), '--name', 'n1', '--notify', ...FAST, '3'], {
      PATH: `${notify.bin}${path.delimiter}${process.env.PATH}`,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(notify.calls()).toEqual([['ralph: done', 'loop n1: complete (exit 0) · 1/1 stories pass · 1 iteration']]);
    expect(warnings(r.stderr)).toEqual([]);
  });

  it('without notify-send on PATH: one warning that says what to install, and the same exit code', async () => {
    const dir = loopRepo({ stories: 2 });
    const r = await ralph(dir, ['--agent-cmd', agent('worker'), '--notify', ...FAST, '1']);
    expect(r.code).toBe(1);
    expect(warnings(r.stderr)).toEqual([
      'ralph: warning: --notify: notify-send was not found on PATH, so no desktop notification was shown (it comes with libnotify: apt-get install libnotify-bin, dnf install libnotify)',
    ]);
  });
  it('a notify-send the agent puts on PATH during the loop never runs: the program is the one found at the start, and --on-exit runs with PATH as the loop started with it', async () => {
    const dir = loopRepo({ stories: 1 });
    const notify = fakeNotifySend();
    // The agent moves the real one into a folder on PATH that was empty at the start, ahead of it.
    const planted = testdir('ralphkit-bin-');
    const agentCmd = `cp '${notify.bin}/notify-send' '${planted}/notify-send'; rm '${notify.bin}/notify-send'; exec node ${agent('worker')}`;
    const r = await ralph(
      dir,
      ['--agent-cmd', agentCmd, '--notify', '--on-exit', 'notify-send from-on-exit', ...FAST, '3'],
      { PATH: `${planted}${path.delimiter}${notify.bin}${path.delimiter}${process.env.PATH}` },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(path.join(planted, 'notify-send'))).toBe(true);
    expect(notify.calls()).toEqual([]);
    expect(warnings(r.stderr).filter((w) => w.includes('--notify'))).toEqual([
      `ralph: warning: --notify: ${notify.bin}/notify-send failed: spawn ${notify.bin}/notify-send ENOENT`,
    ]);
    // --on-exit runs outside the sandbox: its words are looked up on PATH as the loop started with it.
    expect(warnings(r.stderr).filter((w) => w.includes('on-exit'))).toEqual([
      `ralph: warning: PATH folders changed since the loop started; --on-exit runs without their new entries: ${planted} (added notify-send); ${notify.bin} (removed notify-send)`,
      "ralph: warning: --on-exit command exited 127; the loop's exit code is unchanged",
    ]);
    // The checks were told too: the planted program is not on their PATH either (verify/check-env.ts).
    expect(warnings(r.stderr).filter((w) => w.includes('PATH folders changed'))[0]).toContain(
      `${planted} (added notify-send)`,
    );
  });
});

describe('--on-exit', () => {
  it('runs once with the ending in its environment (cost from the agent), its output shown after the exit line', async () => {
    const dir = loopRepo({ stories: 2 });
    const out = path.join(testdir(), 'env.txt');
    const env = { RALPH_CLAUDE_BIN: agent('claude-stream'), FAKE_COST: '0.0125', IS_SANDBOX: '1' };
    const r = await ralph(
      dir,
      ['--agent', 'claude', '--name', 'hook', '--on-exit', `env >> ${out}; echo hook ran`, ...FAST, '1'],
      env,
    );
    expect(r.code, r.stderr).toBe(1);
    const seen = Object.fromEntries(
      readFileSync(out, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('RALPH_'))
        .map((l) => l.split('=')),
    );
    expect(seen).toMatchObject({
      RALPH_EXIT_CODE: '1',
      RALPH_STATUS: 'max-iterations',
      RALPH_LOOP_ID: 'hook',
      RALPH_STORIES_PASSED: '1',
      RALPH_STORIES_TOTAL: '2',
      RALPH_COST_USD: '0.0125',
    });
    expect(seen.RALPH_STATUS).toBe(onlyState(dir).status);
    // Once: one environment dumped.
    expect(readFileSync(out, 'utf8').match(/^RALPH_LOOP_ID=/gm)).toHaveLength(1);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines.at(-1)).toBe('ralph: on-exit: hook ran');
    expect(lines.findIndex((l) => l.includes('(exit 1)'))).toBeLessThan(lines.length - 1);
  });

  it('an agent that reports no cost gives an empty RALPH_COST_USD; a failing command is one warning, exit code unchanged', async () => {
    const dir = loopRepo({ stories: 1 });
    const out = path.join(testdir(), 'env.txt');
    const r = await ralph(dir, ['--agent-cmd', agent('worker'), '--on-exit', `env > ${out}; exit 7`, ...FAST, '3']);
    expect(r.code).toBe(0);
    const text = readFileSync(out, 'utf8');
    expect(text).toMatch(/^RALPH_COST_USD=$/m);
    expect(text).toMatch(/^RALPH_STATUS=complete$/m);
    expect(text).toMatch(/^RALPH_STORIES_PASSED=1$/m);
    expect(warnings(r.stderr)).toEqual([
      "ralph: warning: --on-exit command exited 7; the loop's exit code is unchanged",
    ]);
  });

  it('runs on Ctrl-C too: status interrupted, exit 130', async () => {
    const dir = loopRepo({ stories: 1 });
    const scratch = testdir();
    const pids = path.join(scratch, 'pids');
    const out = path.join(scratch, 'env.txt');
    const loop = startRalph(dir, ['--agent-cmd', agent('sleeper'), '--on-exit', `env > ${out}`, ...FAST, '3'], {
      FAKE_PIDS_FILE: pids,
    });
    await until(
      'the agent to start',
      () => existsSync(pids) && readFileSync(pids, 'utf8').trim().split('\n').length === 2,
      20_000,
    );
    loop.child.kill('SIGINT');
    const r = await loop.done;
    expect(r.code).toBe(130);
    const text = readFileSync(out, 'utf8');
    expect(text).toMatch(/^RALPH_STATUS=interrupted$/m);
    expect(text).toMatch(/^RALPH_EXIT_CODE=130$/m);
    expect(text).toMatch(/^RALPH_STORIES_PASSED=0$/m);
  });

  it('is not run when the start is refused before a loop is recorded', async () => {
    const dir = loopRepo({ stories: 1 });
    const out = path.join(testdir(), 'ran');
    writeFileSync(path.join(dir, 'dirty.txt'), 'uncommitted\n');
    const r = await ralph(dir, ['--agent-cmd', agent('worker'), '--on-exit', `touch ${out}`, ...FAST, '3']);
    expect(r.code).toBe(2);
    expect(existsSync(out)).toBe(false);
  });
});

describe('--webhook', () => {
  it('POSTs {"text": summary} as JSON; the URL shows nowhere: output, --json events, state, progress, ledger, logs, the agent', async () => {
    const hook = await webhookServer(200);
    const secret = 'T000-B000-SeCrEt4a7f';
    const dir = loopRepo({ stories: 1 });
    // The agent's environment, dumped where its logs are: the search below covers it.
    const agentCmd = `env > "$RALPH_RUN_DIR/agent-env.txt"; exec node ${agent('worker')}`;
    const r = await ralph(dir, [
      '--agent-cmd',
      agentCmd,
      '--name',
      'wh',
      '--webhook',
      hook.url(`/hooks/${secret}`),
      '--json',
      ...FAST,
      '3',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(hook.received).toHaveLength(1);
    const [req] = hook.received;
    expect(req).toMatchObject({ method: 'POST', url: `/hooks/${secret}` });
    expect(req.headers['content-type']).toBe('application/json');
    expect(JSON.parse(req.body)).toEqual({ text: 'loop wh: complete (exit 0) · 1/1 stories pass · 1 iteration' });
    expect(r.stdout + r.stderr).not.toContain(secret);
    expect(jsonEvents(r.stdout).at(-1)).toMatchObject({ type: 'exit', code: 0 });
    expect(filesContaining(dir, 'RALPH_LOOP_ID=wh')).toEqual(['ralph/.runs/wh/agent-env.txt']);
    expect(filesContaining(dir, secret)).toEqual([]);
    expect(onlyState(dir).options).not.toHaveProperty('webhook');
  });

  it("RALPH_WEBHOOK_URL alone is the webhook (no URL in the runner's argv), and it shows nowhere either", async () => {
    const hook = await webhookServer(200);
    const secret = 'T000-B000-FromEnv9c1e';
    const dir = loopRepo({ stories: 1 });
    const agentCmd = `env > "$RALPH_RUN_DIR/agent-env.txt"; exec node ${agent('worker')}`;
    const r = await ralph(dir, ['--agent-cmd', agentCmd, '--name', 'whe', '--json', ...FAST, '3'], {
      RALPH_WEBHOOK_URL: hook.url(`/hooks/${secret}`),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(hook.received.map((q) => q.url)).toEqual([`/hooks/${secret}`]);
    expect(JSON.parse(hook.received[0].body)).toEqual({
      text: 'loop whe: complete (exit 0) · 1/1 stories pass · 1 iteration',
    });
    expect(r.stdout + r.stderr).not.toContain(secret);
    expect(filesContaining(dir, secret)).toEqual([]);
    expect(onlyState(dir).options).not.toHaveProperty('webhook');
  });

  it('a RALPH_WEBHOOK_URL that is not a URL is refused at the start, naming the variable and not its value', async () => {
    const dir = loopRepo({ stories: 1 });
    const r = await ralph(dir, ['--agent-cmd', agent('worker'), ...FAST, '3'], {
      RALPH_WEBHOOK_URL: 'not-a-url-secret',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('RALPH_WEBHOOK_URL needs an https:// (or http://) URL');
    expect(r.stderr).not.toContain('not-a-url-secret');
  });

  it('a webhook that answers 500 is one warning, and the exit code is the one the loop had', async () => {
    const hook = await webhookServer(500);
    const dir = loopRepo({ stories: 2 });
    const r = await ralph(dir, ['--agent-cmd', agent('worker'), '--webhook', hook.url('/x'), ...FAST, '1']);
    expect(r.code).toBe(1);
    expect(hook.received).toHaveLength(1);
    expect(warnings(r.stderr)).toEqual([
      "ralph: warning: --webhook: the webhook answered HTTP 500, so the summary may not have arrived; the loop's exit code is unchanged",
    ]);
  });

  it('a webhook that never answers is dropped at its deadline: one warning, the exit code unchanged', async () => {
    const hook = await webhookServer('hang');
    const dir = loopRepo({ stories: 1 });
    const r = await ralph(dir, ['--agent-cmd', agent('worker'), '--webhook', hook.url('/slow'), ...FAST, '3']);
    expect(r.code).toBe(0);
    // The request arrived and was held open: the runner ended on its own deadline, not on an answer.
    expect(hook.received).toHaveLength(1);
    expect(warnings(r.stderr)).toEqual([
      "ralph: warning: --webhook: no answer within 10s; the request was dropped; the loop's exit code is unchanged",
    ]);
  });

  it('a webhook nobody listens on is one warning naming no part of the URL', async () => {
    const dir = loopRepo({ stories: 1 });
    // Port 1 on loopback: refused at once.
    const r = await ralph(dir, [
      '--agent-cmd',
      agent('worker'),
      '--webhook',
      'http://127.0.0.1:1/hooks/private-part',
      ...FAST,
      '3',
    ]);
    expect(r.code).toBe(0);
    expect(warnings(r.stderr)).toEqual([
      "ralph: warning: --webhook: the request failed (ECONNREFUSED); the loop's exit code is unchanged",
    ]);
    expect(r.stderr).not.toContain('private-part');
  });

  it.each([
    ['not a URL', ['--webhook', 'hooks.slack.com/services/SECRET1'], '--webhook needs an https:// (or http://) URL'],
    ['another scheme', ['--webhook', 'ftp://example.com/SECRET1'], '--webhook needs an https:// (or http://) URL'],
    ['a URL where max_iterations goes', ['https://hooks.example.com/SECRET1'], 'a URL was given in its place'],
  ])('refuses %s (exit 1) without echoing it', async (_name, args, message) => {
    const dir = loopRepo({ stories: 1 });
    const r = await ralph(dir, ['--agent-cmd', agent('worker'), ...args]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(message);
    expect(r.stderr).not.toContain('SECRET1');
    expect(existsSync(path.join(dir, 'ralph/.runs'))).toBe(false);
  });
});

describe('Ctrl-C after the loop ended', () => {
  it("stops a running --on-exit command at once: one warning, the loop's exit code", async () => {
    const dir = loopRepo({ stories: 1 });
    const pidFile = path.join(testdir(), 'hook-pid');
    const loop = startRalph(dir, [
      '--agent-cmd',
      agent('worker'),
      '--on-exit',
      `echo $$ > ${pidFile}; exec sleep 300`,
      ...FAST,
      '3',
    ]);
    await until(
      'the on-exit command to start',
      () => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '',
      30_000,
    );
    loop.child.kill('SIGINT');
    const r = await loop.done;
    expect(r.code, r.stderr).toBe(0);
    expect(warnings(r.stderr)).toEqual([
      "ralph: warning: --on-exit command was stopped by an interrupt; the loop's exit code is unchanged",
    ]);
    expect(onlyState(dir)).toMatchObject({ status: 'complete', exitCode: 0 });
    expect(await goneWithin(Number(readFileSync(pidFile, 'utf8')), 5000)).toBe(true);
  });
});
