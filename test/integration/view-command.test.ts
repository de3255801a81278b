// `ralphkit view` as a user runs it: the built CLI (run `npm run build` first; npm test does).
import { describe, expect, it, onTestFinished } from 'vitest';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { BIN, runCli, testdir } from '../support/repo.js';
import { plan, writePlan } from '../support/view-fixtures.js';
import { getJson } from '../support/view-http.js';

describe('ralphkit view (built CLI)', () => {
  it('prints its URL, serves the plan, and exits 0 on Ctrl-C', async () => {
    const repo = testdir();
    writePlan(repo, plan(2, { project: 'From The CLI' }));
    const child = spawn(process.execPath, [BIN, 'view', '--port', '0', '--cwd', repo], { env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    onTestFinished(() => void child.kill('SIGKILL'));
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d) => {
        stdout += d;
        const m = /http:\/\/127\.0\.0\.1:\d+\//.exec(stdout);
        if (m) resolve(m[0]);
      });
      child.on('exit', (code) => reject(new Error(`exited ${code} before printing a URL: ${stderr}`)));
    });
    expect((await getJson(url, '/api/prd')).prd.project).toBe('From The CLI');
    expect(stderr).toContain('Ctrl-C');
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGINT');
    expect(await exit).toBe(0);
  });

  it('a port in use exits 2 and names --port', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
    const port = (blocker.address() as net.AddressInfo).port;
    const res = await runCli(['view', '--port', String(port), '--cwd', testdir()]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`error: port ${port} on 127.0.0.1 is already in use`);
    expect(res.stderr).toContain(`hint: ralphkit view --port ${port + 1}`);
    expect(res.stdout).toBe('');
  });

  it('refuses a port that is not a number', async () => {
    const res = await runCli(['view', '--port', 'eighty']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/--port.*expected a port number/s);
  });
});
