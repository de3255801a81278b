// `ralphkit view` as a user starts it: the built CLI on a free port, resolved once it prints its URL.
import { spawn, type ChildProcess } from 'node:child_process';
import { onTestFinished } from 'vitest';
import { BIN } from './repo.js';

export interface StartedView {
  child: ChildProcess;
  url: string;
  stderr: () => string;
}

/** Spawns `ralphkit view --port 0 ...args` (in `cwd`, with `env` added); killed when the test ends. */
export async function startView(
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<StartedView> {
  const child = spawn(process.execPath, [BIN, 'view', '--port', '0', ...args], {
    cwd: opts.cwd,
    env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1', ...opts.env },
    stdio: 'pipe',
  });
  onTestFinished(() => void child.kill('SIGKILL'));
  child.stdin.end();
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
  return { child, url, stderr: () => stderr };
}
