import { describe, expect, it } from 'vitest';
import { isAllowedHost, toListenError } from '../../../src/view/server.js';
import { parsePort } from '../../../src/commands/view.js';
import { RalphkitError } from '../../../src/errors.js';
import { ralphkitCommand } from '../../../src/util/invocation.js';

describe('isAllowedHost', () => {
  it.each([
    ['127.0.0.1:8089', '127.0.0.1', true],
    ['localhost:8089', '127.0.0.1', true],
    ['LOCALHOST', '127.0.0.1', true],
    ['[::1]:8089', '127.0.0.1', true],
    ['app.localhost:8089', '127.0.0.1', true],
    ['127.0.0.2:8089', '127.0.0.1', true],
    ['evil.example:8089', '127.0.0.1', false], // DNS rebinding: a foreign name pointing at loopback
    ['127.0.0.1.evil.example', '127.0.0.1', false],
    [undefined, '127.0.0.1', false],
    ['evil.example:8089', '::1', false],
    ['my-laptop.lan:8089', '0.0.0.0', true], // bound for the network on purpose: any name
  ])('Host %s on %s → %s', (header, bound, expected) => {
    expect(isAllowedHost(header, bound)).toBe(expected);
  });
});

describe('toListenError', () => {
  const err = (code: string) => Object.assign(new Error(code), { code });
  it.each([
    ['EADDRINUSE', 8089, /port 8089 on 127\.0\.0\.1 is already in use.*--port/, 'view --port 8090'],
    ['EADDRINUSE', 65535, /port 65535/, 'view --port 8089'],
    ['EACCES', 80, /not allowed to listen on port 80.*--port/, 'view --port 8089'],
    ['EADDRNOTAVAIL', 8089, /cannot listen on host 127\.0\.0\.1/, 'view --host 127.0.0.1'],
  ])('%s on port %s', (code, port, message, hint) => {
    const e = toListenError(err(code), port, '127.0.0.1');
    expect(e).toBeInstanceOf(RalphkitError);
    expect(e.message).toMatch(message);
    expect((e as RalphkitError).hint).toBe(ralphkitCommand(hint));
    expect((e as RalphkitError).exitCode).toBe(2);
  });

  it('passes other errors through unchanged', () => {
    const e = err('EMFILE');
    expect(toListenError(e, 1, 'h')).toBe(e);
  });
});

describe('parsePort', () => {
  it.each([
    ['8089', 8089],
    ['0', 0],
    ['65535', 65535],
  ])('%s → %s', (value, port) => {
    expect(parsePort(value)).toBe(port);
  });
  it.each(['-1', '65536', 'abc', '80.5', '', '1e3'])('refuses %j', (value) => {
    expect(() => parsePort(value)).toThrow(/port number/);
  });
});
