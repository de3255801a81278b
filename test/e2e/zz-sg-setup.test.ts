import { it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { loopRepo } from '../support/loop-repo.js';
it('makes repos', () => {
  for (const n of [2, 10]) {
    const dir = loopRepo({ stories: n });
    execFileSync('rm', ['-rf', `/tmp/sg-repo${n}`]);
    execFileSync('cp', ['-a', dir, `/tmp/sg-repo${n}`]);
  }
}, 60000);
