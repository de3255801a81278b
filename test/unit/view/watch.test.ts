import { describe, expect, it } from 'vitest';
import { isRelevant } from '../../../src/view/watch.js';

describe('isRelevant: which fs.watch events re-read the files', () => {
  it.each([
    [['prd.json'], 'prd.json', true],
    [['prd.json'], '.prd.json.4242.a1b2c3d4.tmp', true], // src/util/atomic.ts temp file
    [['prd.json'], 'prd.json.4242.tmp', true],
    [['prd.json'], 'prompt.md', false],
    [['prd.json', 'progress.txt'], 'progress.txt', true],
    [['state.json', 'ledger.jsonl'], 'iteration-3.log', false], // grows while the agent runs: not ours
    [['state.json', 'ledger.jsonl'], 'ledger.jsonl', true],
    [['prd.json'], 'prd.jsonl', false],
    [null, 'anything', true],
    [['prd.json'], null, true], // the platform did not say which file
  ] as const)('%j, %j → %s', (names, filename, expected) => {
    expect(isRelevant(names as string[] | null, filename)).toBe(expected);
  });
});
