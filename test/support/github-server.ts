// A scripted GitHub REST API on 127.0.0.1 for --deliver pr and pr-merge tests: it keeps pull requests in memory (list
// by head, create, update the body, the repository's default branch, merge) and records every request, headers and
// body included. `fail` answers every request with one status and message instead (401, 500, ...). For pr-merge:
// `ci(sha, call)` scripts the check runs and commit statuses of a commit (call counts the looks at check runs, from
// 1; default: none reported), and `headSha(branch)` says where the branch ends on "GitHub" (a merge naming another
// sha gets GitHub's 409), `mergeFail` refuses every merge with a status and message (405, ...), `compareIn` a repository
// whose branches answer GitHub's compare API (merge base and changed files). `script(method, path, call)` answers a
// request itself first when it returns an answer (any status, headers and raw text; or `hang`: never an answer), for
// rate limits, bodies that are not JSON and timeouts; `call` counts the requests so far, from 1.
import { spawnSync } from 'node:child_process';
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
  merged?: boolean;
  /** The head's repository ("owner/name"); default: this one. */
  headRepo?: string;
}

export interface FakeCheckRun {
  name: string;
  status: string;
  conclusion: string | null;
}

export interface FakeStatus {
  context: string;
  state: string;
}

export interface FakeCi {
  runs?: FakeCheckRun[];
  /** Check suites: `status` queued, in_progress or completed, and the app's name. */
  suites?: Array<{ status: string; app: { name: string } }>;
  statuses?: FakeStatus[];
}

export interface ScriptedAnswer {
  status?: number;
  headers?: Record<string, string>;
  /** The body as sent; default: `json` encoded. */
  text?: string;
  json?: unknown;
  /** Never answer (the client's deadline ends the request). */
  hang?: boolean;
}

export interface GitHubServerOptions {
  owner: string;
  repo: string;
  defaultBranch?: string;
  pulls?: FakePull[];
  fail?: { status: number; message: string };
  ci?: (sha: string, call: number) => FakeCi;
  headSha?: (branch: string) => string;
  mergeFail?: { status: number; message: string };
  /** A repository whose branches are GitHub's for the comparison of a base branch and a sha (merge base, changed files). */
  compareIn?: string;
  script?: (method: string, path: string, call: number) => ScriptedAnswer | undefined;
}

export interface GitHubServer {
  url: string;
  requests: RecordedRequest[];
  pulls: FakePull[];
}

export async function startGitHubServer(opts: GitHubServerOptions): Promise<GitHubServer> {
  const requests: RecordedRequest[] = [];
  let ciCalls = 0;
  const pulls = [...(opts.pulls ?? [])];
  const root = `/repos/${opts.owner}/${opts.repo}`;
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      const body = text ? (JSON.parse(text) as Record<string, unknown>) : null;
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      const scripted = opts.script?.(req.method ?? '', req.url ?? '', requests.length);
      if (scripted?.hang) return;
      if (scripted) {
        res.writeHead(scripted.status ?? 200, { 'content-type': 'application/json', ...scripted.headers });
        res.end(scripted.text ?? JSON.stringify(scripted.json ?? {}));
        return;
      }
      const [status, answer] = opts.fail
        ? [opts.fail.status, { message: opts.fail.message, documentation_url: 'https://docs.github.com/rest' }]
        : route(req.method ?? '', new URL(req.url ?? '/', 'http://x'), body);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer));
    });
  });
  const view = (p: FakePull) => ({
    number: p.number,
    html_url: `https://github.example/${opts.owner}/${opts.repo}/pull/${p.number}`,
    title: p.title,
    body: p.body,
    head: {
      ref: p.head,
      label: `${opts.owner}:${p.head}`,
      sha: headOf(p.head),
      repo: { full_name: p.headRepo ?? `${opts.owner}/${opts.repo}` },
    },
    base: { ref: p.base },
    merged: p.merged === true,
    merge_commit_sha: p.merged ? 'f'.repeat(40) : null,
  });
  const headOf = (branch: string) => {
    try {
      return opts.headSha?.(branch) ?? null;
    } catch {
      return null;
    }
  };
  function route(method: string, url: URL, body: Record<string, unknown> | null): [number, unknown] {
    if (method === 'GET' && url.pathname === root)
      return [200, { full_name: `${opts.owner}/${opts.repo}`, default_branch: opts.defaultBranch ?? 'main' }];
    if (method === 'GET' && url.pathname === `${root}/pulls`) {
      const head = url.searchParams.get('head') ?? '';
      return [200, pulls.filter((p) => `${opts.owner}:${p.head}` === head).map(view)];
    }
    if (method === 'POST' && url.pathname === `${root}/pulls`) {
      const pull = {
        number: 100 + pulls.length + 1,
        head: String(body?.head),
        base: String(body?.base),
        title: String(body?.title),
        body: String(body?.body),
      };
      pulls.push(pull);
      return [201, view(pull)];
    }
    const commit = new RegExp(`^${root}/commits/([0-9a-f]{40})/(check-runs|status|check-suites)$`).exec(url.pathname);
    if (method === 'GET' && commit) {
      const ci = opts.ci?.(commit[1], commit[2] === 'check-runs' ? ++ciCalls : ciCalls) ?? {};
      if (commit[2] === 'check-suites')
        return [200, { total_count: ci.suites?.length ?? 0, check_suites: ci.suites ?? [] }];
      return [
        200,
        commit[2] === 'check-runs'
          ? { total_count: ci.runs?.length ?? 0, check_runs: ci.runs ?? [] }
          : combined(commit[1], ci.statuses ?? []),
      ];
    }
    const compared = new RegExp(`^${root}/compare/(.+)\\.\\.\\.([0-9a-f]{40})$`).exec(decodeURIComponent(url.pathname));
    if (method === 'GET' && compared && opts.compareIn) return compare(opts.compareIn, compared[1], compared[2]);
    const merge = new RegExp(`^${root}/pulls/(\\d+)/merge$`).exec(url.pathname)?.[1];
    if (method === 'PUT' && merge)
      return mergePull(
        pulls.find((p) => String(p.number) === merge),
        body,
      );
    const number = new RegExp(`^${root}/pulls/(\\d+)$`).exec(url.pathname)?.[1];
    const pull = pulls.find((p) => String(p.number) === number);
    if (method === 'GET' && pull) return [200, view(pull)];
    if (method === 'PATCH' && pull) {
      if (typeof body?.body === 'string') pull.body = body.body;
      return [200, view(pull)];
    }
    return [404, { message: 'Not Found' }];
  }
  function mergePull(pull: FakePull | undefined, body: Record<string, unknown> | null): [number, unknown] {
    if (!pull) return [404, { message: 'Not Found' }];
    if (opts.mergeFail) return [opts.mergeFail.status, { message: opts.mergeFail.message }];
    const head = opts.headSha?.(pull.head);
    if (typeof body?.sha === 'string' && head && body.sha !== head)
      return [409, { message: 'Head branch was modified. Review and try the merge again.' }];
    pull.merged = true;
    return [200, { sha: 'f'.repeat(40), merged: true, message: 'Pull Request successfully merged' }];
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, pulls };
}

// GitHub's comparison of a base branch with a commit: the merge base and the files changed since it (as GitHub lists them).
function compare(dir: string, base: string, head: string): [number, unknown] {
  const mergeBase = spawnSync('git', ['merge-base', `refs/heads/${base}`, head], {
    cwd: dir,
    encoding: 'utf8',
  }).stdout.trim();
  if (!mergeBase) return [404, { message: 'Not Found' }];
  const rows = spawnSync('git', ['diff', '--name-status', '--no-renames', mergeBase, head], {
    cwd: dir,
    encoding: 'utf8',
  })
    .stdout.split('\n')
    .filter(Boolean);
  const status: Record<string, string> = { A: 'added', D: 'removed', M: 'modified' };
  const files = rows.map((r) => r.split('\t')).map(([s, filename]) => ({ filename, status: status[s] ?? 'changed' }));
  return [200, { status: 'ahead', merge_base_commit: { sha: mergeBase }, files }];
}

// GitHub's combined state: failure if any status is error or failure, pending if there are none or one is pending.
function combined(sha: string, statuses: FakeStatus[]): unknown {
  const state = statuses.some((x) => x.state === 'failure' || x.state === 'error')
    ? 'failure'
    : !statuses.length || statuses.some((x) => x.state === 'pending')
      ? 'pending'
      : 'success';
  return { state, sha, total_count: statuses.length, statuses };
}
