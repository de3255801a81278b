// A scripted stand-in for the Anthropic Messages API, so the real Claude Code CLI can run in tests
// without a network or a key. Each main request is answered by a scenario (a function of the request,
// the repository on disk and the call count); side requests the CLI makes on its own (titles, quota
// probes, small-model calls) get a harmless short text so they never steer the story.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type AssistantBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; name: string; input: Record<string, unknown>; id?: string };

/** The next assistant message: its blocks, and why it stops (default: tool_use when it calls a tool, else end_turn). */
export interface AssistantTurn {
  blocks: AssistantBlock[];
  stopReason?: 'end_turn' | 'tool_use' | 'max_tokens';
}

/** Instead of a turn: an API error response with this HTTP status, as Anthropic's API sends one. */
export interface ApiErrorReply {
  apiError: { status: number; type: string; message: string };
}

export interface ToolResult {
  toolUseId: string;
  isError: boolean;
  /** The result's text content joined. */
  text: string;
}

export interface ScenarioContext {
  /** The parsed request body (model, system, messages, tools, ...). */
  body: MessagesBody;
  /** The repository the agent works in: the server's `repo` option, else the CLI's "Primary working directory". */
  repo: string | undefined;
  /** 1-based count of main (scenario-answered) requests the server has seen, across all CLI runs. */
  call: number;
  /** Assistant messages already in this conversation: 0 on the first request of a CLI run. */
  turn: number;
  /** Tool results the CLI sent back in the last user message. */
  toolResults: ToolResult[];
}

export type Scenario = (ctx: ScenarioContext) => AssistantTurn | ApiErrorReply | Promise<AssistantTurn | ApiErrorReply>;

export interface MessagesBody {
  model?: string;
  max_tokens?: number;
  stream?: boolean;
  system?: unknown;
  messages?: Array<{ role: string; content: unknown }>;
  tools?: Array<{ name: string; description?: string; input_schema?: unknown }>;
  [key: string]: unknown;
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: MessagesBody | null;
  /** main: answered by the scenario · side: the CLI's own small calls · other: probes and unknown paths */
  kind: 'main' | 'side' | 'other';
}

export interface ModelServerOptions {
  scenario: Scenario;
  repo?: string;
  /** Called for requests the server does not know; default prints one line to stderr. */
  onUnknown?: (req: RecordedRequest) => void;
}

export interface ModelServer {
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** Errors thrown by the scenario (answered with HTTP 400 so the CLI stops instead of retrying). */
  errors: Error[];
  /** Bodies of the requests the scenario answered, in order. */
  mainRequests(): MessagesBody[];
  close(): Promise<void>;
}

export async function startModelServer(options: ModelServerOptions): Promise<ModelServer> {
  const requests: RecordedRequest[] = [];
  const errors: Error[] = [];
  let calls = 0;
  const onUnknown =
    options.onUnknown ?? ((r) => process.stderr.write(`model-server: unknown request ${r.method} ${r.url}\n`));

  const server = http.createServer(async (req, res) => {
    // A CLI killed mid-request (iteration timeout, Ctrl-C, a test's SIGKILL) aborts its upload: there is no one
    // left to answer, and a rejection here would be an unhandled error that fails the whole run.
    const raw = await readBody(req).catch(() => null);
    if (raw === null) return void res.destroy();
    const body = parseJson(raw);
    const pathname = (req.url ?? '/').split('?')[0];
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      headers: req.headers,
      body,
      kind: 'other',
    };
    requests.push(record);
    try {
      if (record.method === 'POST' && pathname === '/v1/messages' && body) {
        record.kind = isSideRequest(body) ? 'side' : 'main';
        const turn =
          record.kind === 'side' ? sideTurn() : await options.scenario(contextFor(body, options.repo, ++calls));
        if ('apiError' in turn)
          return sendJson(res, turn.apiError.status, {
            type: 'error',
            error: { type: turn.apiError.type, message: turn.apiError.message },
          });
        return sendMessage(res, body, turn, requests.length);
      }
      if (record.method === 'POST' && pathname === '/v1/messages/count_tokens')
        return sendJson(res, 200, { input_tokens: Math.ceil(raw.length / 4) });
      if (record.method === 'HEAD' || record.method === 'GET') {
        if (pathname !== '/' && pathname !== '/v1/models') onUnknown(record);
        return sendJson(res, 200, pathname === '/v1/models' ? { data: [], has_more: false } : {});
      }
      onUnknown(record);
      sendJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: `no route ${pathname}` } });
    } catch (err) {
      errors.push(err as Error);
      sendJson(res, 400, {
        type: 'error',
        error: { type: 'invalid_request_error', message: `scenario failed: ${(err as Error).message}` },
      });
    }
  });

  const { port, close } = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    errors,
    mainRequests: () => requests.filter((r) => r.kind === 'main').map((r) => r.body!),
    close,
  };
}

/** `server` listening on 127.0.0.1 at a free port; `close` drops open connections too. */
export async function listenOnLoopback(server: http.Server): Promise<{ port: number; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return { port, close };
}

/** Quota probes ask for one token; title and summary calls come without tools. Neither is the agent's turn. */
export function isSideRequest(body: MessagesBody): boolean {
  return (body.max_tokens ?? 0) <= 1 || !Array.isArray(body.tools) || body.tools.length === 0;
}

function sideTurn(): AssistantTurn {
  return { blocks: [{ type: 'text', text: 'ok' }] };
}

function contextFor(body: MessagesBody, repo: string | undefined, call: number): ScenarioContext {
  const messages = body.messages ?? [];
  return {
    body,
    repo: repo ?? findWorkingDirectory(body),
    call,
    turn: messages.filter((m) => m.role === 'assistant').length,
    toolResults: lastToolResults(messages),
  };
}

function lastToolResults(messages: NonNullable<MessagesBody['messages']>): ToolResult[] {
  const last = [...messages].reverse().find((m) => m.role === 'user');
  if (!last || !Array.isArray(last.content)) return [];
  return (last.content as Array<Record<string, unknown>>)
    .filter((c) => c.type === 'tool_result')
    .map((c) => ({ toolUseId: String(c.tool_use_id), isError: c.is_error === true, text: contentText(c.content) }));
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  // Tool results nest their own content; text blocks carry `text`.
  return content.map((c) => (typeof c?.text === 'string' ? c.text : contentText(c?.content))).join('\n');
}

/** Every text in the request (system prompt and messages), for assertions on what the CLI told the model. */
export function requestText(body: MessagesBody): string {
  const parts: string[] = [contentText(body.system)];
  for (const m of body.messages ?? []) parts.push(contentText(m.content));
  return parts.join('\n');
}

function findWorkingDirectory(body: MessagesBody): string | undefined {
  return /Primary working directory: (.+)/.exec(requestText(body))?.[1]?.trim();
}

function sendMessage(res: http.ServerResponse, body: MessagesBody, turn: AssistantTurn, n: number): void {
  const blocks = turn.blocks.map((b, i) => (b.type === 'tool_use' ? { ...b, id: b.id ?? `toolu_${n}_${i}` } : b));
  const stopReason = turn.stopReason ?? (blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
  const usage = {
    input_tokens: Math.ceil(JSON.stringify(body).length / 4),
    output_tokens: Math.ceil(JSON.stringify(blocks).length / 4),
  };
  const message = {
    id: `msg_${n}`,
    type: 'message',
    role: 'assistant',
    model: body.model ?? 'claude-test',
    stop_sequence: null,
  };
  if (!body.stream) {
    const content = blocks.map((b) =>
      b.type === 'tool_use' ? { type: 'tool_use', id: b.id, name: b.name, input: b.input } : b,
    );
    return sendJson(res, 200, { ...message, content, stop_reason: stopReason, usage });
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const event = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  event('message_start', {
    message: {
      ...message,
      content: [],
      stop_reason: null,
      usage: { input_tokens: usage.input_tokens, output_tokens: 1 },
    },
  });
  blocks.forEach((b, index) => {
    if (b.type === 'text') {
      event('content_block_start', { index, content_block: { type: 'text', text: '' } });
      event('content_block_delta', { index, delta: { type: 'text_delta', text: b.text } });
    } else {
      event('content_block_start', { index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
      event('content_block_delta', {
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) },
      });
    }
    event('content_block_stop', { index });
  });
  event('message_delta', {
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  event('message_stop', {});
  res.end();
}

export function sendJson(res: http.ServerResponse, status: number, data: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(data));
}

export function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (data += d));
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });
}

function parseJson(raw: string): MessagesBody | null {
  try {
    return raw ? (JSON.parse(raw) as MessagesBody) : null;
  } catch {
    return null;
  }
}
