// The prompt needs a terminal: util-linux `script` gives the built CLI a pseudo-terminal.
import { describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BIN, cliAsTyped, gitdir, gitEnv, runCli } from '../support/repo.js';
import { snapshotTree } from '../support/fake-package.js';

const hasScript = spawnSync('script', ['--version']).status === 0;
const strip = (s: string) => s.replace(/\x1b\[[0-9;?]*[a-zA-Z]/g, '');

/** Run the CLI in a pseudo-terminal; each time `when` appears in the output (again), send the next key. */
function inTerminal(
  cwd: string,
  args: string[],
  keys: { when: string; send: string }[],
): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, BIN, ...args].map((a) => `'${a}'`).join(' ');
  return new Promise((resolve) => {
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd,
      env: { ...gitEnv(), TERM: 'xterm' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    let seen = 0;
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    // A key sent as the program exits meets a closed pipe; the exit code and output still tell the story.
    child.stdin.on('error', () => {});
    child.stdout.on('data', (d) => {
      output += d;
      const key = keys[seen];
      if (key && strip(output).split(key.when).length - 1 > seen) {
        seen++;
        child.stdin.write(key.send);
      }
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output: strip(output) });
    });
  });
}

async function conflicted(): Promise<string> {
  const repo = gitdir();
  await runCli(['install'], { cwd: repo });
  const manifestPath = path.join(repo, 'ralph/.ralphkit.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  manifest.files['ralph/ralph.sh'].sha256 = createHash('sha256').update('an older runner').digest('hex');
  writeFileSync(manifestPath, JSON.stringify(manifest));
  writeFileSync(path.join(repo, 'ralph/ralph.sh'), '#!/bin/sh\n# my edits\n');
  return repo;
}

describe.skipIf(!hasScript)('install at a terminal', () => {
  it('asks about a conflict; Enter alone keeps your file (the safe default) and says so', async () => {
    const repo = await conflicted();
    const result = await inTerminal(repo, ['install'], [{ when: 'Return to submit', send: '\r' }]);
    expect(result.code).toBe(0);
    expect(result.output).toContain('ralph/ralph.sh: edited since installed, and ralphkit ships a new version.');
    expect(result.output).toContain(
      `Kept your ralph/ralph.sh over the new version, as you chose (\`${cliAsTyped()} install --force\` backs yours up and installs the new one).`,
    );
    expect(readFileSync(path.join(repo, 'ralph/ralph.sh'), 'utf8')).toBe('#!/bin/sh\n# my edits\n');
    expect(existsSync(path.join(repo, 'ralph/.backup'))).toBe(false);
  });

  it('choosing Overwrite (arrow down once) backs the file up and installs', async () => {
    const repo = await conflicted();
    const result = await inTerminal(repo, ['install'], [{ when: 'Return to submit', send: '\x1b[B\r' }]);
    expect(result.code).toBe(0);
    const backup = /saved to (\S+)/.exec(result.output)?.[1];
    expect(readFileSync(path.join(repo, backup!), 'utf8')).toBe('#!/bin/sh\n# my edits\n');
    expect(readFileSync(path.join(repo, 'ralph/ralph.sh'), 'utf8')).not.toContain('# my edits');
  });

  it('Abort (arrow down three times) writes nothing and exits 2', async () => {
    const repo = await conflicted();
    const before = snapshotTree(repo);
    const result = await inTerminal(repo, ['install'], [{ when: 'Return to submit', send: '\x1b[B\x1b[B\x1b[B\r' }]);
    expect(result.code).toBe(2);
    expect(result.output).toContain('stopped at the prompt; nothing was written');
    expect(snapshotTree(repo)).toEqual(before);
  });

  it('install --no-ci over an edited workflow asks; Enter keeps it as yours, Remove backs it up and removes it', async () => {
    const workflow = '.github/workflows/ralph.yml';
    const edited = async () => {
      const repo = gitdir();
      await runCli(['install', '--ci', 'github'], { cwd: repo });
      writeFileSync(path.join(repo, workflow), 'name: my own loop\n');
      return repo;
    };
    const keep = await edited();
    const kept = await inTerminal(keep, ['install', '--no-ci'], [{ when: 'Return to submit', send: '\r' }]);
    expect(kept.code).toBe(0);
    expect(kept.output).toContain('ralphkit stops managing it');
    expect(kept.output).toContain(
      `Kept your ${workflow} as you chose: it is yours now, and ralphkit no longer manages it.`,
    );
    expect(readFileSync(path.join(keep, workflow), 'utf8')).toBe('name: my own loop\n');
    const manifest = JSON.parse(readFileSync(path.join(keep, 'ralph/.ralphkit.json'), 'utf8'));
    expect([manifest.ci, manifest.files[workflow]]).toEqual([undefined, undefined]);

    const remove = await edited();
    const removed = await inTerminal(remove, ['install', '--no-ci'], [{ when: 'Return to submit', send: '\x1b[B\r' }]);
    expect(removed.code).toBe(0);
    expect(existsSync(path.join(remove, workflow))).toBe(false);
    const backup = /saved to (\S+)/.exec(removed.output)?.[1];
    expect(readFileSync(path.join(remove, backup!), 'utf8')).toBe('name: my own loop\n');
  });

  it('--yes never prompts, even at a terminal: the conflict is exit 2', async () => {
    const repo = await conflicted();
    const result = await inTerminal(repo, ['install', '--yes'], []);
    expect(result.code).toBe(2);
    expect(result.output).not.toContain('Return to submit');
    expect(existsSync(path.join(repo, 'ralph/.backup'))).toBe(false);
  });
});
