// A --parallel run builds its setup while other workers' agents run; one of them can serve a dependency (a tarball
// on 127.0.0.1, the host's network is shared) that is gone once it exits. An adversarial pass got exit 0 that way:
// the cache built beside the agent served every later gate. A setup built while an agent ran is dropped at the end,
// so what decides exit 0 installs again with every agent gone.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SetupCache, type CachedSetup } from '../../../../src/engine/verify/setup-cache.js';
import { testdir } from '../../../support/repo.js';

function made(): CachedSetup {
  const folder = testdir('ralph-setup-');
  mkdirSync(path.join(folder, 'node_modules'));
  return { folder, names: ['node_modules'], result: { ok: true } as CachedSetup['result'], print: '' };
}

describe('SetupCache: setups built while an agent ran', () => {
  it('a build with no agent running is kept at the end', async () => {
    const cache = new SetupCache();
    const done = made();
    cache.begin('k')!(done);
    expect(cache.dropBuiltWhileAgentsRan()).toBe(false);
    expect(await cache.lookup('k')).toBe(done);
  });

  it('a build begun while an agent ran, or during which one started and ended, is dropped at the end', async () => {
    const cache = new SetupCache();
    const ended = cache.agentRuns();
    const finish = cache.begin('during')!;
    ended();
    finish(made());
    expect(cache.dropBuiltWhileAgentsRan()).toBe(true);
    expect(await cache.lookup('during')).toBeNull();

    const finishQuick = cache.begin('quick')!;
    cache.agentRuns()(); // an agent started and gone while setup installed
    finishQuick(made());
    expect(cache.dropBuiltWhileAgentsRan()).toBe(true);
    expect(await cache.lookup('quick')).toBeNull();
    // Built again with every agent gone: kept.
    cache.begin('quick')!(made());
    expect(cache.dropBuiltWhileAgentsRan()).toBe(false);
    expect(await cache.lookup('quick')).not.toBeNull();
  });
});
