// `ralphkit view` as a user runs it: the built CLI (run `npm run build` first; npm test does).
import { describe, expect, it, onTestFinished } from 'vitest';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { cliAsTyped, runCli, testdir } from '../../support/repo.js';
import { plan, writePlan } from '../../support/view-fixtures.js';
import { getJson } from '../../support/view-http.js';
import { startView } from '../../support/view-cli.js';

describe('ralphkit view (built CLI)', () => {
  it('prints its URL, serves the plan, and exits 0 on Ctrl-C', async () => {
    const repo = testdir();
    writePlan(repo, plan(2, { project: 'From The CLI' }));
    const { child, url, stderr } = await startView(['--cwd', repo]);
    expect((await getJson(url, '/api/prd')).prd.project).toBe('From The CLI');
    expect(stderr()).toContain('Ctrl-C');
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
    expect(res.stderr).toContain(`hint: ${cliAsTyped()} view --port ${port + 1}`);
    expect(res.stdout).toBe('');
  });

  it('refuses a port that is not a number', async () => {
    const res = await runCli(['view', '--port', 'eighty']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/--port.*expected a port number/s);
  });

  // The opener is whatever the platform's command is (xdg-open on Linux, open on macOS), found on PATH.
  describe.skipIf(process.platform === 'win32')('--open', () => {
    const OPENER = process.platform === 'darwin' ? 'open' : 'xdg-open';

    it('hands the URL of the port it bound to the system opener', async () => {
      const bin = testdir('ralphkit-opener-');
      const record = path.join(bin, 'called-with');
      fakeOpener(path.join(bin, OPENER), `printf '%s\\n' "$@" > '${record}'\nexit 0`);
      const { url, stderr } = await startView(['--open', '--cwd', testdir()], {
        env: { PATH: `${bin}${path.delimiter}${process.env.PATH}` },
      });
      await expect.poll(() => existsSync(record) && readFileSync(record, 'utf8'), { timeout: 15_000 }).toBe(`${url}\n`);
      expect(url).not.toMatch(/:0\/$/);
      expect((await getJson(url, '/api/prd')).exists).toBe(false); // the URL it was handed is the server's
      expect(stderr()).not.toContain('could not open a browser');
    });

    it('without an opener on PATH, keeps serving and says to open the URL by hand', async () => {
      const { url, stderr, child } = await startView(['--open', '--cwd', testdir()], {
        env: { PATH: testdir('ralphkit-empty-path-') },
      });
      await expect
        .poll(stderr, { timeout: 15_000 })
        .toContain(`could not open a browser (${OPENER} not found); open ${url} yourself`);
      expect((await getJson(url, '/api/prd')).exists).toBe(false);
      expect(child.exitCode).toBe(null);
    });

    it('an opener that fails (no desktop) is a warning, not a crash', async () => {
      const bin = testdir('ralphkit-opener-');
      fakeOpener(path.join(bin, OPENER), 'exit 4');
      const { url, stderr, child } = await startView(['--open', '--cwd', testdir()], { env: { PATH: bin } });
      await expect
        .poll(stderr, { timeout: 15_000 })
        .toContain(`could not open a browser (${OPENER} exited with 4); open ${url} yourself`);
      expect((await getJson(url, '/api/prd')).exists).toBe(false);
      expect(child.exitCode).toBe(null);
    });
  });
});

function fakeOpener(file: string, body: string): void {
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
}
