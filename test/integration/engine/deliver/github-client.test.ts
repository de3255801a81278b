// The GitHub client against loopback servers: a server's complaint comes back in its own words with the token
// scrubbed, a server that never answers is given up at the deadline, and an unreachable one is one clear error.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, GitHubError } from '../../../../src/engine/deliver/github.js';

const TOKEN = 'ghp_secretsecretsecret';
let server: Server | null = null;

afterEach(() => {
  server?.closeAllConnections();
  server?.close();
  server = null;
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function failure(p: Promise<unknown>): Promise<GitHubError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GitHubError);
  return err as GitHubError;
}

describe('createClient', () => {
  it("a refusal that quotes the token: GitHub's words with the token masked, and the status", async () => {
    const url = await listen((req, res) => {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: `Resource not accessible with ${req.headers.authorization}` }));
    });
    const err = await failure(createClient(url, TOKEN).request('GET', '/repos/a/b/pulls'));
    expect(err.status).toBe(403);
    expect(err.message).toBe('GitHub answered HTTP 403: Resource not accessible with Bearer ***');
  });

  it('a server that never answers is given up at the deadline', async () => {
    const url = await listen(() => undefined);
    const err = await failure(createClient(url, TOKEN, 300).request('POST', '/repos/a/b/pulls', { title: 't' }));
    expect(err.status).toBeNull();
    expect(err.message).toMatch(/^no answer from 127\.0\.0\.1:\d+ within 0\.3s$/);
  });

  it("nothing listening: the network error's code", async () => {
    const url = await listen(() => undefined);
    server!.close();
    const err = await failure(createClient(url, TOKEN).request('GET', '/repos/a/b'));
    expect(err.message).toMatch(/^cannot reach 127\.0\.0\.1:\d+ \(ECONNREFUSED\)$/);
  });

  it('a 2xx answer is parsed JSON', async () => {
    const url = await listen((_req, res) => res.end('{"default_branch":"trunk"}'));
    expect(await createClient(url, TOKEN).request('GET', '/repos/a/b')).toEqual({
      status: 200,
      body: { default_branch: 'trunk' },
    });
  });
});
