// The Stop hook's checks follow the runner's default (hook/session.ts sessionRun): under the sandbox wherever
// bubblewrap works, never from state.json (the session can write it).
import { chmodSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sessionRun } from '../../../../src/engine/hook/session.js';
import { probeSandbox } from '../../../../src/engine/agents/sandbox.js';
import { DEFAULT_OPTIONS } from '../../../../src/engine/cli/args.js';
import type { LoopState } from '../../../../src/engine/store/state-types.js';
import type { RunIo } from '../../../../src/engine/types.js';
import { gitdir, testdir, writeFiles } from '../../../support/repo.js';

const state = (options: Record<string, unknown>) =>
  ({ id: 's1', options: { ...DEFAULT_OPTIONS, ...options }, inSession: true }) as unknown as LoopState;
const io = (env: NodeJS.ProcessEnv) => ({ env, cwd: '/', stdout: () => {}, stderr: () => {} }) as unknown as RunIo;

describe("sessionRun: the sandbox of an in-session loop's checks", () => {
  it.runIf(probeSandbox(process.env).ok)('on where bubblewrap works, whatever state.json says', () => {
    const repo = gitdir();
    expect(sessionRun(repo, state({ sandbox: false }), io(process.env), () => {}).options.sandbox).toBe(true);
  });

  it('off where bubblewrap cannot create its namespaces (the checks then run as the runner does without it)', () => {
    const repo = gitdir();
    const dir = testdir();
    writeFiles(dir, { bwrap: '#!/bin/sh\necho "bwrap: No permissions to creating new namespace" >&2\nexit 1\n' });
    chmodSync(path.join(dir, 'bwrap'), 0o755);
    expect(
      sessionRun(
        repo,
        state({ sandbox: true }),
        io({ ...process.env, RALPH_BWRAP_BIN: path.join(dir, 'bwrap') }),
        () => {},
      ).options.sandbox,
    ).toBe(false);
  });
});
