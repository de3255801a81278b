// A scripted stand-in for OpenAI's Responses API, so the real Codex CLI can run in tests without a network or a
// key. Codex reaches it through a custom model provider (model-codex.ts); each `POST /v1/responses` is answered by
// a scenario (a function of the request, the repository and the call count) and streamed as Server-Sent Events:
// response.created, then per output item output_item.added (text deltas for a message) and output_item.done, then
// response.completed with usage. Codex 0.171.0 needs only the `done` items and `completed`; the rest is what the
// real API also sends (codex-rs/codex-api/src/sse/responses.rs).
import http from 'node:http';
import { listenOnLoopback, readBody, sendJson } from './model-server.js';

/** One output item: a message to the user, or a call of Codex's shell tool (`exec_command`, a string `cmd`). */
export type ResponsesItem = { type: 'message'; text: string } | { type: 'exec'; cmd: string };

export interface ResponsesTurn {
  items: ResponsesItem[];
}

/** Instead of a turn: an API error response with this HTTP status, as OpenAI's API sends one. */
export interface ResponsesApiError {
  apiError: { status: number; code: string; message: string };
}

export interface ToolOutput {
  callId: string;
  /** What Codex sent back: for exec_command, a header (exit code, wall time) then the command's output. */
  output: string;
}

export interface ResponsesContext {
  body: ResponsesBody;
  repo: string | undefined;
  /** 1-based count of requests answered by the scenario, across all Codex runs. */
  call: number;
  /** Tool calls already made in this conversation: 0 on the first request of a Codex run. */
  turn: number;
  /** The outputs of this conversation's tool calls, in order. */
  toolOutputs: ToolOutput[];
}

export type ResponsesScenario = (
  ctx: ResponsesContext,
) => ResponsesTurn | ResponsesApiError | Promise<ResponsesTurn | ResponsesApiError>;

export interface ResponsesBody {
  model?: string;
  stream?: boolean;
  input?: Array<Record<string, unknown>>;
  tools?: Array<{ type: string; name?: string }>;
  [key: string]: unknown;
}

export interface RecordedResponsesRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: ResponsesBody | null;
  /** main: answered by the scenario · other: anything else (answered 404, or 200 for GET probes) */
  kind: 'main' | 'other';
}

export interface ResponsesServer {
  /** The provider's base_url: `http://127.0.0.1:<port>/v1`. */
  url: string;
  requests: RecordedResponsesRequest[];
  /** Errors thrown by the scenario (answered with HTTP 400, which Codex does not retry). */
  errors: Error[];
  mainRequests(): ResponsesBody[];
  close(): Promise<void>;
}

export async function startResponsesServer(options: {
  scenario: ResponsesScenario;
  repo?: string;
}): Promise<ResponsesServer> {
  const requests: RecordedResponsesRequest[] = [];
  const errors: Error[] = [];
  let calls = 0;
  const server = http.createServer(async (req, res) => {
    const raw = await readBody(req).catch(() => null);
    if (raw === null) return void res.destroy();
    const pathname = (req.url ?? '/').split('?')[0];
    const record: RecordedResponsesRequest = {
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      headers: req.headers,
      body: parseJson(raw),
      kind: 'other',
    };
    requests.push(record);
    try {
      if (record.method === 'POST' && pathname === '/v1/responses' && record.body) {
        record.kind = 'main';
        const turn = await options.scenario(contextFor(record.body, options.repo, ++calls));
        if ('apiError' in turn)
          return sendJson(res, turn.apiError.status, {
            error: { type: 'invalid_request_error', code: turn.apiError.code, message: turn.apiError.message },
          });
        return streamTurn(res, record.body, turn, calls);
      }
      process.stderr.write(`responses-server: unknown request ${record.method} ${record.url}\n`);
      sendJson(res, 404, {
        error: { type: 'invalid_request_error', code: 'not_found', message: `no route ${pathname}` },
      });
    } catch (err) {
      errors.push(err as Error);
      sendJson(res, 400, {
        error: {
          type: 'invalid_request_error',
          code: 'scenario_failed',
          message: `scenario failed: ${(err as Error).message}`,
        },
      });
    }
  });
  const { port, close } = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    errors,
    mainRequests: () => requests.filter((r) => r.kind === 'main').map((r) => r.body!),
    close,
  };
}

function contextFor(body: ResponsesBody, repo: string | undefined, call: number): ResponsesContext {
  const input = body.input ?? [];
  const toolOutputs = input
    .filter((i) => i.type === 'function_call_output')
    .map((i) => ({ callId: String(i.call_id), output: outputText(i.output) }));
  return {
    body,
    repo: repo ?? findWorkingDirectory(body),
    call,
    turn: input.filter((i) => i.type === 'function_call').length,
    toolOutputs,
  };
}

function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  return Array.isArray(output) ? output.map((c) => (typeof c?.text === 'string' ? c.text : '')).join('\n') : '';
}

/** Every text in the request (instructions, messages, tool outputs), for assertions on what Codex told the model. */
export function responsesRequestText(body: ResponsesBody): string {
  const parts = [typeof body.instructions === 'string' ? body.instructions : ''];
  for (const item of body.input ?? []) {
    if (item.type === 'function_call_output') parts.push(outputText(item.output));
    else if (Array.isArray(item.content)) parts.push(outputText(item.content));
  }
  return parts.join('\n');
}

// Codex tells the model its folder in an <environment_context> message.
function findWorkingDirectory(body: ResponsesBody): string | undefined {
  return /<cwd>([^<]+)<\/cwd>/.exec(responsesRequestText(body))?.[1]?.trim();
}

function streamTurn(res: http.ServerResponse, body: ResponsesBody, turn: ResponsesTurn, n: number): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const event = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const response = { id: `resp_${n}`, object: 'response', model: body.model ?? 'codex-test', status: 'in_progress' };
  event('response.created', { response });
  turn.items.forEach((item, index) => {
    const done = renderItem(item, n, index);
    event('response.output_item.added', {
      output_index: index,
      item: item.type === 'message' ? { ...done, content: [] } : done,
    });
    if (item.type === 'message')
      event('response.output_text.delta', {
        item_id: done.id,
        output_index: index,
        content_index: 0,
        delta: item.text,
      });
    event('response.output_item.done', { output_index: index, item: done });
  });
  const inputTokens = Math.ceil(JSON.stringify(body).length / 4);
  const outputTokens = Math.ceil(JSON.stringify(turn.items).length / 4);
  const usage = {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: inputTokens + outputTokens,
  };
  event('response.completed', { response: { ...response, status: 'completed', usage } });
  res.end();
}

function renderItem(item: ResponsesItem, n: number, index: number): Record<string, unknown> {
  if (item.type === 'message')
    return {
      type: 'message',
      id: `msg_${n}_${index}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: item.text, annotations: [] }],
    };
  // login: false runs `bash -c`, not a login shell whose profile could reset PATH.
  const args = JSON.stringify({ cmd: item.cmd, login: false });
  return {
    type: 'function_call',
    id: `fc_${n}_${index}`,
    call_id: `call_${n}_${index}`,
    name: 'exec_command',
    arguments: args,
    status: 'completed',
  };
}

function parseJson(raw: string): ResponsesBody | null {
  try {
    return raw ? (JSON.parse(raw) as ResponsesBody) : null;
  } catch {
    return null;
  }
}
