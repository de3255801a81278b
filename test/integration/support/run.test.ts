import { describe, expect, it } from 'vitest';
import { run } from '../../support/repo.js';

// The helper every e2e test spawns through. CI once failed on an EPIPE raised by a command that exited
// before reading its stdin; the helper must report the command's result, not crash the test file.
describe('test/support run()', () => {
  it('returns the exit code of a command that exits without reading a large input', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await run('sh', ['-c', 'exit 3'], { input: 'x'.repeat(4 * 1024 * 1024) });
      expect(res.code).toBe(3);
    }
  });

  it('still passes the input to a command that reads it', async () => {
    const res = await run('sh', ['-c', 'wc -c'], { input: 'hello' });
    expect(res.stdout.trim()).toBe('5');
  });
});
