// --deliver pr: GitHub's REST API, with built-ins only. One code path for github.com, Enterprise and Actions: every
// call goes to GITHUB_API_URL (default https://api.github.com; https://<host>/api/v3 for another host). The token
// comes from the environment (GH_TOKEN, ...), else `gh auth token --hostname <host>`; it is only ever put in the Authorization
// header, never in a message, and a message from the server is scrubbed of it all the same.
import { execFile } from 'node:child_process';
import { endProgram } from './programs.js';
import http from 'node:http';
import https from 'node:https';
import { sanitizeForTerminal } from '../../util/ansi.js';

/** The deadline of one request, from connecting to the end of the answer. */
export const GITHUB_TIMEOUT_MS = 12_000;
/** How long `gh auth token` may take (it only reads its configuration). */
const GH_TIMEOUT_MS = 5_000;

export interface GitHubRepo {
  host: string;
  owner: string;
  repo: string;
}

/**
 * Pure: owner and repository of a GitHub remote URL, or null for anything else (a path, a URL with more or fewer
 * than two path parts). Takes https://host/o/r(.git), http://, ssh://[user@]host[:port]/o/r, git://, and the
 * scp-like user@host:o/r; a user or token in the URL is ignored.
 */
export function parseRemoteUrl(url: string): GitHubRepo | null {
  const text = url.trim();
  const scp = /^(?:[^@/\s]+@)?([^:/\s]+):(?!\/)([^\s]+)$/.exec(text);
  let host: string;
  let pathPart: string;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    let parsed: URL;
    try {
      parsed = new URL(text);
    } catch {
      return null;
    }
    if (!['https:', 'http:', 'ssh:', 'git:', 'git+ssh:', 'ssh+git:'].includes(parsed.protocol) || !parsed.hostname)
      return null;
    host = parsed.hostname.toLowerCase();
    pathPart = decodeURIComponent(parsed.pathname);
  } else if (scp && scp[1].length > 1) {
    // One letter before the colon is a Windows drive (C:/repo), not a host.
    host = scp[1].toLowerCase();
    pathPart = scp[2];
  } else {
    return null;
  }
  const parts = pathPart
    .replace(/^\/+|\/+$/g, '')
    .replace(/\.git$/, '')
    .split('/');
  if (parts.length !== 2 || !parts.every((p) => /^[A-Za-z0-9._-]+$/.test(p) && p !== '.' && p !== '..')) return null;
  return { host, owner: parts[0], repo: parts[1] };
}

/** Pure: the API's base URL for a host; GITHUB_API_URL (Actions sets it; a test points it at a local server) wins. */
export function apiBaseUrl(host: string, env: NodeJS.ProcessEnv): string {
  const given = env.GITHUB_API_URL?.trim();
  if (given) return given.replace(/\/+$/, '');
  return host === 'github.com' ? 'https://api.github.com' : `https://${host}/api/v3`;
}

/** Pure: the token the environment offers for a host, as gh reads it (GH_ENTERPRISE_TOKEN for other hosts). */
export function envToken(host: string, env: NodeJS.ProcessEnv): string | null {
  const names =
    host === 'github.com' ? ['GH_TOKEN', 'GITHUB_TOKEN'] : ['GH_ENTERPRISE_TOKEN', 'GITHUB_ENTERPRISE_TOKEN'];
  for (const name of names) if (env[name]?.trim()) return env[name]!.trim();
  return null;
}

/**
 * The user's token for a host: the environment's (it comes first for gh too), else the gh CLI's when it is installed
 * and logged in; null: none. gh is the one found at the loop's start (programs.ts), run with only what it needs to
 * find its login (HOME, its config folder, the keyring's session bus), so nothing else of the environment steers it.
 */
export async function resolveToken(host: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  const given = envToken(host, env);
  const gh = endProgram('gh', env);
  if (given || !gh) return given;
  const keep = [
    'PATH',
    'HOME',
    'GH_CONFIG_DIR',
    'XDG_CONFIG_HOME',
    'XDG_RUNTIME_DIR',
    'DBUS_SESSION_BUS_ADDRESS',
  ].filter((k) => env[k] !== undefined);
  const ghEnv = { ...Object.fromEntries(keep.map((k) => [k, env[k]])), GH_PROMPT_DISABLED: '1', NO_COLOR: '1' };
  return new Promise<string | null>((resolve) => {
    execFile(
      gh,
      ['auth', 'token', '--hostname', host],
      { env: ghEnv, timeout: GH_TIMEOUT_MS, encoding: 'utf8' },
      (err, stdout) => {
        resolve(!err && stdout.trim() && !/\s/.test(stdout.trim()) ? stdout.trim() : null);
      },
    );
  });
}

export interface ApiAnswer {
  status: number;
  body: unknown;
}

/** An answer as it came: the body's text (parsed only once it is known to be a success) and the rate-limit headers. */
interface RawAnswer {
  status: number;
  text: string;
  headers: Record<string, string | string[] | undefined>;
}

export class GitHubError extends Error {
  /**
   * Set when GitHub said the token's rate limit is used up (403 or 429 with `x-ratelimit-remaining: 0`, a
   * `retry-after`, or its "rate limit" message): the time (ms since the epoch) before which no request should be made.
   */
  rateLimitedUntil: number | null = null;

  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}

/** A secondary rate limit without retry-after or reset: GitHub asks for at least a minute. */
const RATE_LIMIT_DEFAULT_MS = 60_000;

/**
 * Pure: when a 403 or 429 is GitHub's rate limit rather than a refusal, the time to wait until (GitHub's REST docs,
 * "Rate limits": `retry-after` seconds first, then `x-ratelimit-reset` epoch seconds when `x-ratelimit-remaining`
 * is 0, else a minute for a message that says "rate limit"); null for any other answer.
 */
export function planRateLimitWait(
  status: number,
  headers: RawAnswer['headers'],
  message: string,
  now: number,
): number | null {
  if (status !== 403 && status !== 429) return null;
  const header = (name: string) => {
    const v = headers[name];
    return (Array.isArray(v) ? v[0] : v)?.trim() ?? '';
  };
  const retryAfter = header('retry-after');
  if (/^\d+$/.test(retryAfter)) return now + Number(retryAfter) * 1000;
  const reset = header('x-ratelimit-reset');
  if (header('x-ratelimit-remaining') === '0')
    return /^\d+$/.test(reset) ? Math.max(now, Number(reset) * 1000) : now + RATE_LIMIT_DEFAULT_MS;
  if (status === 429 || /rate limit/i.test(message)) return now + RATE_LIMIT_DEFAULT_MS;
  return null;
}

/** The client: one repository, one token. Every method throws GitHubError with GitHub's own words. */
export interface GitHubClient {
  request(method: 'GET' | 'POST' | 'PATCH' | 'PUT', path: string, body?: unknown): Promise<ApiAnswer>;
}

export function createClient(baseUrl: string, token: string, timeoutMs = GITHUB_TIMEOUT_MS): GitHubClient {
  return {
    async request(method, path, body) {
      const raw = await send(new URL(baseUrl + path), method, token, body, timeoutMs);
      const parsed = parseJson(raw.text);
      if (raw.status >= 200 && raw.status < 300) {
        // A success says what it did in JSON; anything else (a proxy's page, a cut answer) tells nothing.
        if (parsed.ok || (raw.status === 204 && !raw.text.trim())) return { status: raw.status, body: parsed.value };
        const said = raw.text.trim()
          ? `: ${renderApiComplaint({ status: raw.status, body: raw.text }).replace(/^GitHub answered HTTP \d+: /, '')}`
          : ' (empty)';
        throw new GitHubError(
          scrub(`GitHub answered HTTP ${raw.status} with a body that is not JSON${said}`, token),
          raw.status,
        );
      }
      const answer = { status: raw.status, body: parsed.value };
      const err = new GitHubError(scrub(renderApiComplaint(answer), token), raw.status);
      err.rateLimitedUntil = planRateLimitWait(raw.status, raw.headers, err.message, Date.now());
      throw err;
    },
  };
}

function send(url: URL, method: string, token: string, body: unknown, timeoutMs: number): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? null : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string | number> = {
      accept: 'application/vnd.github+json',
      authorization: `Bearer ${token}`,
      'x-github-api-version': '2022-11-28',
      'user-agent': 'ralphkit',
      connection: 'close',
      ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
    };
    const client = url.protocol === 'http:' ? http : https;
    const req = client.request(url, { method, headers, agent: false });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new GitHubError(`no answer from ${url.host} within ${timeoutMs / 1000}s`, null));
    }, timeoutMs);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), headers: res.headers });
      });
      res.on('error', () => undefined);
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(new GitHubError(`cannot reach ${url.host} (${err.code ?? err.message})`, null));
    });
    req.end(payload ?? undefined);
  });
}

function parseJson(text: string): { ok: boolean; value: unknown } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, value: text };
  }
}

/** Pure: GitHub's message (and the messages of its `errors` list) with the HTTP status, on one line. */
export function renderApiComplaint(answer: ApiAnswer): string {
  const body = answer.body as { message?: unknown; errors?: Array<{ message?: unknown }> } | string | null;
  const words: string[] = [];
  if (body && typeof body === 'object') {
    if (typeof body.message === 'string') words.push(body.message);
    for (const e of Array.isArray(body.errors) ? body.errors : [])
      if (e && typeof e.message === 'string') words.push(e.message);
  } else if (typeof body === 'string' && body.trim()) {
    words.push(body.trim().split('\n')[0].slice(0, 200));
  }
  const said = sanitizeForTerminal(words.join(': ')).replace(/\s+/g, ' ').slice(0, 400);
  return `GitHub answered HTTP ${answer.status}${said ? `: ${said}` : ''}`;
}

function scrub(text: string, token: string): string {
  return token ? text.split(token).join('***') : text;
}
