// Finding and running the real opencode CLI against a scripted OpenAI-compatible server (Chat Completions, streamed).
// The CLI is a test tool installed by .ci/run into a cache folder, never a dependency of ralphkit. opencode reaches the
// server through a custom provider in the test user's configuration (@ai-sdk/openai-compatible, bundled in the CLI:
// it runs with the npm registry unreachable), its key in auth.json, as `opencode auth login` leaves it.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { testdir } from './repo.js';
import { listenOnLoopback, readBody, sendJson } from './model-server.js';

export const OPENCODE_BIN =
  process.env.RALPHKIT_OPENCODE_BIN ||
  path.join(os.homedir(), '.cache/ralphkit-ci/opencode/node_modules/.bin/opencode');

export const OPENCODE_MISSING = !existsSync(OPENCODE_BIN);

/** As for Codex (model-codex.ts): skipped with a message on a developer machine, a failure in CI. */
export const SKIP_OPENCODE = OPENCODE_MISSING && !process.env.CI;

export const OPENCODE_MISSING_MESSAGE =
  `The real opencode CLI is not at ${OPENCODE_BIN}. Run .ci/run (it installs opencode-ai into ` +
  `~/.cache/ralphkit-ci/opencode and exports RALPHKIT_OPENCODE_BIN), or set RALPHKIT_OPENCODE_BIN.`;

if (SKIP_OPENCODE) process.stderr.write(`skipping opencode e2e tests: ${OPENCODE_MISSING_MESSAGE}\n`);

/** Call first in each opencode test: fails with the way out when the CLI is absent (reached only in CI). */
export function requireOpencode(): void {
  if (OPENCODE_MISSING) throw new Error(OPENCODE_MISSING_MESSAGE);
}

/** The key the scripted provider's login holds; the server records the bearer token each request carried. */
export const OPENCODE_TEST_KEY = 'opencode-test-key';

export interface ChatBody {
  model?: string;
  stream?: boolean;
  messages?: Array<{ role: string; content: unknown }>;
  tools?: unknown[];
}

export interface ChatServer {
  url: string;
  /** Every request answered by `answer`, with its bearer token; title requests (no tools) too. */
  requests: Array<{ body: ChatBody; bearer: string | null }>;
  /** Requests that were not a Chat Completions call, and bodies that were not JSON. */
  errors: string[];
  close(): Promise<void>;
}

/** Every text of a request (system prompt, messages, tool results), for assertions on what reached the model. */
export function chatText(body: ChatBody): string {
  const text = (c: unknown): string =>
    typeof c === 'string'
      ? c
      : Array.isArray(c)
        ? c.map((p) => (typeof p?.text === 'string' ? p.text : '')).join('\n')
        : '';
  return (body.messages ?? []).map((m) => text(m.content)).join('\n');
}

/** opencode asks for a title first, without tools: not the reviewer's turn. */
export const isTitleRequest = (body: ChatBody) => !Array.isArray(body.tools) || body.tools.length === 0;

/** A Chat Completions server on 127.0.0.1 answering each request with `answer(body)` as one streamed message. */
export async function startChatServer(answer: (body: ChatBody) => string): Promise<ChatServer> {
  const requests: ChatServer['requests'] = [];
  const errors: string[] = [];
  const server = http.createServer(async (req, res) => {
    const raw = await readBody(req);
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      errors.push(`${req.method} ${req.url}`);
      return sendJson(res, 404, { error: { message: 'not scripted' } });
    }
    let body: ChatBody;
    try {
      body = JSON.parse(raw) as ChatBody;
    } catch {
      errors.push(`not JSON: ${raw.slice(0, 200)}`);
      return sendJson(res, 400, { error: { message: 'not JSON' } });
    }
    const auth = req.headers.authorization;
    requests.push({ body, bearer: auth?.startsWith('Bearer ') ? auth.slice(7) : null });
    const text = isTitleRequest(body) ? 'Review' : answer(body);
    const chunk = (delta: object, finish: string | null, usage?: object) =>
      `data: ${JSON.stringify({ id: 'chat-1', object: 'chat.completion.chunk', created: 1, model: body.model, choices: usage ? [] : [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk({ role: 'assistant', content: text }, null));
    res.write(chunk({}, 'stop'));
    res.write(chunk({}, null, { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }));
    res.end('data: [DONE]\n\n');
  });
  const { port, close } = await listenOnLoopback(server);
  return { url: `http://127.0.0.1:${port}/v1`, requests, errors, close };
}

/**
 * Environment for an opencode run against `server`: a throwaway HOME whose opencode configuration names the scripted
 * provider and model, its key in ~/.local/share/opencode/auth.json, every OPENCODE_* and XDG_*_HOME variable of the
 * outer shell removed (a developer's own configuration never reaches the test), updates and the models.dev fetch off.
 */
export function opencodeEnv(server: ChatServer, base: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const home = testdir('ralphkit-opencode-user-');
  const config = {
    $schema: 'https://opencode.ai/config.json',
    provider: {
      scripted: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Scripted Chat Completions',
        options: { baseURL: server.url },
        models: { 'review-test-model': { name: 'review-test-model' } },
      },
    },
    model: 'scripted/review-test-model',
    autoupdate: false,
  };
  mkdirSync(path.join(home, '.config/opencode'), { recursive: true });
  writeFileSync(path.join(home, '.config/opencode/opencode.json'), `${JSON.stringify(config, null, 2)}\n`);
  mkdirSync(path.join(home, '.local/share/opencode'), { recursive: true });
  writeFileSync(
    path.join(home, '.local/share/opencode/auth.json'),
    JSON.stringify({ scripted: { type: 'api', key: OPENCODE_TEST_KEY } }),
    { mode: 0o600 },
  );
  const cleared = Object.fromEntries(
    Object.keys(process.env)
      .filter((k) => /^OPENCODE_|^XDG_[A-Z]+_HOME$/.test(k))
      .map((k) => [k, undefined]),
  );
  return {
    ...cleared,
    HOME: home,
    ...base,
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
  };
}
