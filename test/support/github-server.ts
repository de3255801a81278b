// A scripted GitHub REST API on 127.0.0.1 for --deliver pr tests: it keeps pull requests in memory (list by head,
// create, update the body, the repository's default branch) and records every request, headers and body included.
// `fail` answers every request with one status and message instead (401, 500, ...).
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown> | null;
}

export interface FakePull {
  number: number;
  head: string;
  base: string;
  title: string;
  body: string;
}

export interface GitHubServer {
  url: string;
  requests: RecordedRequest[];
  pulls: FakePull[];
}

export async function startGitHubServer(opts: { owner: string; repo: string; defaultBranch?: string; pulls?: FakePull[]; fail?: { status: number; message: string } }): Promise<GitHubServer> {
  const requests: RecordedRequest[] = [];
  const pulls = [...(opts.pulls ?? [])];
  const root = `/repos/${opts.owner}/${opts.repo}`;
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      const body = text ? (JSON.parse(text) as Record<string, unknown>) : null;
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      const [status, answer] = opts.fail ? [opts.fail.status, { message: opts.fail.message, documentation_url: 'https://docs.github.com/rest' }] : route(req.method ?? '', new URL(req.url ?? '/', 'http://x'), body);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer));
    });
  });
  const view = (p: FakePull) => ({ number: p.number, html_url: `https://github.example/${opts.owner}/${opts.repo}/pull/${p.number}`, title: p.title, body: p.body, head: { ref: p.head, label: `${opts.owner}:${p.head}` }, base: { ref: p.base } });
  function route(method: string, url: URL, body: Record<string, unknown> | null): [number, unknown] {
    if (method === 'GET' && url.pathname === root) return [200, { full_name: `${opts.owner}/${opts.repo}`, default_branch: opts.defaultBranch ?? 'main' }];
    if (method === 'GET' && url.pathname === `${root}/pulls`) {
      const head = url.searchParams.get('head') ?? '';
      return [200, pulls.filter((p) => `${opts.owner}:${p.head}` === head).map(view)];
    }
    if (method === 'POST' && url.pathname === `${root}/pulls`) {
      const pull = { number: 100 + pulls.length + 1, head: String(body?.head), base: String(body?.base), title: String(body?.title), body: String(body?.body) };
      pulls.push(pull);
      return [201, view(pull)];
    }
    const number = new RegExp(`^${root}/pulls/(\\d+)$`).exec(url.pathname)?.[1];
    const pull = pulls.find((p) => String(p.number) === number);
    if (method === 'PATCH' && pull) {
      if (typeof body?.body === 'string') pull.body = body.body;
      return [200, view(pull)];
    }
    return [404, { message: 'Not Found' }];
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  }));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, pulls };
}
