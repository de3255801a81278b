// The order in which vitest starts test files: the slowest first, from the durations measured on a CI-class machine
// (test/durations.json, written by `npm run test:slowest -- --write`). With two workers, starting the long files first
// keeps both busy to the end instead of leaving one 8-minute file to run alone. Vitest's own cache does this too, but
// a fresh CI machine has no cache and falls back to file size, a poor guess for e2e files.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Seconds per file (path relative to the repository root), or an empty table when the file is missing or unreadable. */
export function readDurations(file = path.join(ROOT, 'test/durations.json')): Record<string, number> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, number>) : {};
  } catch {
    return {};
  }
}

/** A file not in the table yet (new since the table was written) is guessed at its tier's median. */
export function estimate(durations: Record<string, number>, file: string): number {
  if (typeof durations[file] === 'number') return durations[file];
  const tier = file.split('/').slice(0, 2).join('/');
  const peers = Object.entries(durations)
    .filter(([name]) => name.startsWith(`${tier}/`))
    .map(([, seconds]) => seconds)
    .sort((a, b) => a - b);
  return peers.length ? peers[Math.floor(peers.length / 2)] : 0;
}

export class DurationSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const durations = readDurations();
    const cost = (spec: TestSpecification) =>
      estimate(durations, path.relative(ROOT, spec.moduleId).split(path.sep).join('/'));
    return [...files].sort((a, b) => cost(b) - cost(a));
  }
}
