// The `status` table: the AGENT column keeps what tells loops apart, and a loop that stopped says why under its row.
import { describe, expect, it } from 'vitest';
import { renderAgentCell, renderLoopTable, type LoopSummary } from '../../src/engine/loops.js';

const loop = (extra: Partial<LoopSummary>): LoopSummary => ({
  id: 'l1', status: 'complete', iteration: 2, maxIterations: 10, agent: 'claude', pid: 1, alive: false, costUsd: 0, prd: 'ralph/prd.json',
  storiesPassed: 1, storiesTotal: 1, verified: 1, unverified: 0, rejected: 0, startedAt: '', updatedAt: '', exitCode: 0, ...extra,
});

describe('renderAgentCell', () => {
  it.each([
    ['claude', 'claude'],
    ['cmd: /tmp/walk/agents/slow.sh', 'cmd: slow.sh'],
    ['cmd: node /tmp/walk/agents/honest.mjs', 'cmd: node honest.mjs'],
    ['cmd: ./agents/a-very-long-agent-script-name.sh --fast', 'cmd: a-very-…e.sh --fast'],
  ])('%s → %s', (agent, cell) => {
    expect(renderAgentCell(agent)).toBe(cell);
    expect(renderAgentCell(agent).length).toBeLessThanOrEqual(24);
  });
});

describe('renderLoopTable notes', () => {
  it.each([
    ['failed', loop({ status: 'failed', message: 'unexpected error: boom\nstack' }), '  └ unexpected error: boom'],
    ['max-iterations', loop({ status: 'max-iterations', message: 'max iterations reached (10) with stories still open' }), '  └ max iterations reached (10)'],
    ['dead', loop({ status: 'dead', id: 'd1' }), '  └ runner gone (killed?); continue with: ./ralph/ralph.sh --resume d1'],
  ])('a %s loop shows why under its row', (_, l, note) => {
    const lines = renderLoopTable([l]).split('\n');
    expect(lines[1]).toMatch(new RegExp(`^${l.id}\\s+${l.status}`));
    expect(lines[2].startsWith(note)).toBe(true);
  });

  it.each([
    ['complete', loop({ message: 'every story passes' })],
    ['running', loop({ status: 'running', alive: true, message: 'waiting' })],
  ])('a %s loop has no note', (_, l) => {
    expect(renderLoopTable([l]).trim().split('\n')).toHaveLength(2);
  });

  it('a long message is cut to one short line', () => {
    const note = renderLoopTable([loop({ status: 'refused', message: 'x'.repeat(500) })]).split('\n')[2];
    expect(note.length).toBeLessThan(120);
    expect(note.endsWith('…')).toBe(true);
  });
});

describe('renderLoopTable cost', () => {
  it.each([
    ['an --agent-cmd agent that reports nothing', loop({ agent: 'cmd: ./agent.sh', costUsd: 0 }), 'n/a'],
    ['an --agent-cmd agent with a cost carried over', loop({ agent: 'cmd: ./agent.sh', costUsd: 0.5 }), '$0.50'],
    ['claude', loop({ agent: 'claude', costUsd: 0 }), '$0.00'],
  ])('%s → %s', (_, l, cell) => {
    expect(renderLoopTable([l]).split('\n')[1].split(/\s{2,}/)).toContain(cell);
  });
});
