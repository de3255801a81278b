import { describe, expect, it } from 'vitest';
import { findCycles } from '../../../src/prd/graph.js';

describe('findCycles', () => {
  // edges[i] = the nodes node i depends on
  it.each([
    ['no edges', [[], [], []], []],
    ['a chain', [[], [0], [1]], []],
    ['a diamond', [[], [0], [0], [1, 2]], []],
    ['a self-loop', [[0]], [[0, 0]]],
    ['two nodes', [[1], [0]], [[0, 1, 0]]],
    ['three nodes, found from the lowest', [[], [3], [1], [2]], [[1, 3, 2, 1]]],
    ['the shortest way round a tangle', [[1, 3], [2], [0], [0]], [[0, 3, 0]]],
    [
      'two separate tangles',
      [[1], [0], [], [4], [3]],
      [
        [0, 1, 0],
        [3, 4, 3],
      ],
    ],
    ['a cycle reached through a chain', [[1], [2], [3], [2]], [[2, 3, 2]]],
    ['a self-loop beside a clean chain', [[], [0], [2]], [[2, 2]]],
  ])('%s', (_what, edges, cycles) => {
    expect(findCycles(edges)).toEqual(cycles);
  });

  it('walks 20,000 chained nodes without overflowing the stack', () => {
    const n = 20_000;
    const edges = Array.from({ length: n }, (_, i) => (i === 0 ? [n - 1] : [i - 1]));
    const [cycle] = findCycles(edges);
    expect(cycle).toHaveLength(n + 1);
    expect(cycle[0]).toBe(0);
    expect(cycle[1]).toBe(n - 1);
  });
});
