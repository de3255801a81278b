// The one PATH lookup (src/util/which.ts), used by the agent check, git, bwrap, gh, node, the reviewer and the CLI's hints.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findExecutable } from '../../../src/util/which.js';
import { findExecutable as fromAgentCheck } from '../../../src/engine/agents/check.js';

const dir = mkdtempSync(path.join(tmpdir(), 'which-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function folder(name: string, files: Record<string, number>): string {
  const f = path.join(dir, name);
  mkdirSync(f, { recursive: true });
  for (const [file, mode] of Object.entries(files)) {
    if (mode < 0) mkdirSync(path.join(f, file));
    else writeFileSync(path.join(f, file), '#!/bin/sh\n', { mode });
    if (mode >= 0) chmodSync(path.join(f, file), mode);
  }
  return f;
}

const plain = folder('plain', { tool: 0o644, dir: -1 });
const first = folder('first', { tool: 0o755 });
const second = folder('second', { tool: 0o755, other: 0o755 });
const PATH = (...dirs: string[]) => ({ PATH: dirs.join(path.delimiter) });

describe('findExecutable', () => {
  it('the first executable regular file in PATH order; a file without execute rights or a folder is passed over', () => {
    expect(findExecutable('tool', PATH(plain, first, second))).toBe(path.join(first, 'tool'));
    expect(findExecutable('dir', PATH(plain))).toBeNull();
    expect(findExecutable('missing', PATH(plain, first))).toBeNull();
    expect(findExecutable('tool', {})).toBeNull();
  });

  it('passes over empty and relative PATH folders (the shell would look there from a folder a lookup made once cannot know)', () => {
    const relative = path.relative(process.cwd(), first);
    expect(findExecutable('tool', PATH('', relative, second))).toBe(path.join(second, 'tool'));
    expect(findExecutable('tool', PATH(relative))).toBeNull();
  });

  it('a name with a slash is that file, when executable', () => {
    expect(findExecutable(path.join(first, 'tool'), {})).toBe(path.join(first, 'tool'));
    expect(findExecutable(path.join(plain, 'tool'), PATH(first))).toBeNull();
  });

  it('skips the folders the caller names (npm node_modules/.bin for the hints)', () => {
    expect(findExecutable('tool', PATH(first, second), { skip: (f) => f === first })).toBe(path.join(second, 'tool'));
  });

  it('is the same function the agent check exports (one lookup, one rule)', () => {
    expect(fromAgentCheck).toBe(findExecutable);
  });
});
