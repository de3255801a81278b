// The dashboard's HTTP server (SPEC §8): the page's own files, three JSON endpoints, one event
// stream, and 404 for everything else. `ralphkit view` and the tests both start it through here.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RalphkitError, EXIT } from '../errors.js';
import { readAssets, type Asset } from './assets.js';
import { createEventHub, type Body, type EventHub } from './events.js';
import { readLoopsSnapshot, readProgressSnapshot, resolveViewPaths, type ViewPaths } from './snapshot.js';
import { createPrdCache, readPrdBody } from './prd-body.js';
import { watchChanges } from './watch.js';
import { memoize, prdInputsKey } from './memo.js';
import { ralphkitCommand } from '../util/invocation.js';

/** Options of `startViewServer`; the same as `ralphkit view`'s flags. */
export interface ViewServerOptions {
  /** The repository whose ralph/ folder is shown. */
  cwd: string;
  /** The plan, relative to cwd (default ralph/prd.json). */
  prd?: string;
  /** 0 picks a free port. Default 8089. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** How often files are polled in case fs.watch misses a change (default 500 ms). */
  pollMs?: number;
  /** Where index.html, app.js and style.css are read from (default: beside this module). */
  pageDir?: string;
  /** false: notice changes by polling alone, without fs.watch (for tests of the fallback). */
  fsWatch?: boolean;
}

export interface ViewServer {
  url: string;
  host: string;
  port: number;
  paths: ViewPaths;
  close(): Promise<void>;
}

export const DEFAULT_PORT = 8089;
export const DEFAULT_HOST = '127.0.0.1';

// The page needs nothing from elsewhere; a policy this strict also stops injected markup from running.
const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/** The JSON endpoints, each a body made fresh for the request (the plan's only when what it reads changed). */
function apiBodies(paths: ViewPaths, prdBody: () => Body): Record<string, () => Body> {
  return {
    '/api/prd': prdBody,
    '/api/progress': () => JSON.stringify(readProgressSnapshot(paths)),
    '/api/loops': () => JSON.stringify(readLoopsSnapshot(paths)),
  };
}

export async function startViewServer(options: ViewServerOptions): Promise<ViewServer> {
  const host = options.host ?? DEFAULT_HOST;
  const paths = resolveViewPaths(options.cwd, options.prd);
  const assets = readAssets(options.pageDir);
  // Kept across reads: a plan written again with its stories where they were (a story's passes flipped) is not laid
  // out anew, and only the cards that changed are written again (view/prd-body.ts).
  const prdCache = createPrdCache();
  const prdBody = memoize(
    () => readPrdBody(paths, prdCache),
    () => prdInputsKey(paths),
  );
  const hub = createEventHub(paths, SECURITY_HEADERS, prdBody);
  const api = apiBodies(paths, prdBody);
  const server = createServer((req, res) => handle(req, res, { api, assets, hub, host }));
  await listen(server, options.port ?? DEFAULT_PORT, host);
  const watcher = watchChanges(paths, () => hub.refresh(), {
    pollMs: options.pollMs,
    fsWatch: options.fsWatch,
    extraSignature: hub.aliveSignature,
  });
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | null = null;
  return {
    url: `http://${urlHost(host)}:${port}/`,
    host,
    port,
    paths,
    close() {
      closing ??= new Promise((resolve) => {
        watcher.close();
        hub.close();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

interface Context {
  /** Path → the body of that JSON endpoint now. */
  api: Record<string, () => Body>;
  assets: Map<string, Asset>;
  hub: EventHub;
  host: string;
}

function handle(req: IncomingMessage, res: ServerResponse, ctx: Context): void {
  // Matched exactly, never decoded or normalised: only the listed names are served.
  const pathname = (req.url ?? '/').split('?')[0];
  if (req.method !== 'GET' && req.method !== 'HEAD')
    return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n', { Allow: 'GET, HEAD' });
  if (!isAllowedHost(req.headers.host, ctx.host))
    return send(res, 403, 'text/plain; charset=utf-8', 'unexpected Host header\n');
  if (pathname === '/api/events') return ctx.hub.connect(req, res);
  const api = ctx.api[pathname];
  if (api) {
    // What the agent wrote is read here: nothing in it may stop the dashboard (the page shows the error and asks again).
    let body: ReturnType<typeof api>;
    try {
      body = api();
    } catch (err) {
      return send(res, 500, 'text/plain; charset=utf-8', `could not read: ${(err as Error).message}\n`);
    }
    return send(
      res,
      200,
      'application/json; charset=utf-8',
      body,
      { 'Cache-Control': 'no-store' },
      req.method === 'HEAD',
    );
  }
  const asset = ctx.assets.get(pathname);
  if (asset) return send(res, 200, asset.type, asset.body, { 'Cache-Control': 'no-cache' }, req.method === 'HEAD');
  send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
}

function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: Body | Buffer,
  extra: Record<string, string> = {},
  headOnly = false,
): void {
  // Encoded once: the plan of a big project is megabytes, and its length and its bytes come from the same buffers.
  const chunks = typeof body === 'string' ? [Buffer.from(body)] : Buffer.isBuffer(body) ? [body] : body;
  let length = 0;
  for (const chunk of chunks) length += chunk.length;
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'Content-Type': type,
    'Content-Length': String(length),
    ...extra,
  });
  if (!headOnly) {
    res.cork(); // the chunks leave in one write
    for (const chunk of chunks) res.write(chunk);
    res.uncork();
  }
  res.end();
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/**
 * On a loopback address, only loopback Host names are answered: a web page the user visits cannot
 * rebind its own domain name to 127.0.0.1 and read the plan. On any other address the user chose
 * to be reachable under names we cannot know.
 */
export function isAllowedHost(hostHeader: string | undefined, boundHost: string): boolean {
  if (!LOOPBACK_NAMES.has(boundHost) && !boundHost.startsWith('127.')) return true;
  if (!hostHeader) return false;
  const name = hostHeader.startsWith('[') ? hostHeader.slice(0, hostHeader.indexOf(']') + 1) : hostHeader.split(':')[0];
  const lower = name.toLowerCase();
  return LOOPBACK_NAMES.has(lower) || lower.endsWith('.localhost') || /^127(\.\d{1,3}){3}$/.test(lower);
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => reject(toListenError(err, port, host));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

export function toListenError(err: NodeJS.ErrnoException, port: number, host: string): Error {
  const next = port >= 65535 ? DEFAULT_PORT : port + 1;
  if (err.code === 'EADDRINUSE') {
    return new RalphkitError(
      `port ${port} on ${host} is already in use (another ralphkit view?); choose another with --port`,
      {
        exitCode: EXIT.refused,
        hint: ralphkitCommand(`view --port ${next}`),
        cause: err,
      },
    );
  }
  if (err.code === 'EACCES') {
    return new RalphkitError(`not allowed to listen on port ${port}; choose another with --port`, {
      exitCode: EXIT.refused,
      hint: ralphkitCommand(`view --port ${DEFAULT_PORT}`),
      cause: err,
    });
  }
  if (err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN') {
    return new RalphkitError(`cannot listen on host ${host}: no such local address`, {
      exitCode: EXIT.refused,
      hint: ralphkitCommand(`view --host ${DEFAULT_HOST}`),
      cause: err,
    });
  }
  return err;
}

function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}
