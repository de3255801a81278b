// When setup fails where only the cache key's files are, the log names the line that says why: npm's error, not the
// notice about a newer npm or the path of its debug log that follow it.
import { describe, expect, it } from 'vitest';
import { lastLine } from '../../../../src/engine/verify/setup-cache.js';

describe('lastLine of a failed setup', () => {
  it("picks npm's last error line over the notices and the log path after it", () => {
    const out = [
      'npm error code EINTEGRITY',
      'npm error sha512-AAA integrity checksum failed when using sha512: wanted sha512-AAA but got sha512-BBB.',
      'npm notice New major version of npm available! 10.9.2 -> 11.6.4',
      'npm notice To update run: npm install -g npm@11.6.4',
      'npm error A complete log of this run can be found in: /root/.npm/_logs/x-debug-0.log',
      '',
    ].join('\n');
    expect(lastLine(out)).toBe(
      ': npm error sha512-AAA integrity checksum failed when using sha512: wanted sha512-AAA but got sha512-BBB.',
    );
  });

  it('takes the last line of a tool that prints no error word, and nothing of an empty output', () => {
    expect(lastLine('Collecting x\nNo matching distribution found for x\n')).toBe(
      ': No matching distribution found for x',
    );
    expect(lastLine('\n  \n')).toBe('');
  });
});
