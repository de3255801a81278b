// The scripted model server on its own (no CLI needed): the wire format the Claude Code tests rely on.
import net from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startModelServer, type Scenario } from '../support/model-server.js';

async function serve(scenario: Scenario) {
  const server = await startModelServer({ scenario, onUnknown: () => {} });
  onTestFinished(() => server.close());
  return server;
}

const TOOLS = [{ name: 'Bash', input_schema: { type: 'object' } }];
const toolTurn: Scenario = ({ turn }) => ({
  blocks: [
    { type: 'text', text: `turn ${turn}` },
    { type: 'tool_use', name: 'Bash', input: { command: 'echo hi' } },
  ],
});

function post(url: string, body: unknown) {
  return fetch(`${url}/v1/messages?beta=true`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** Folds an SSE stream back into the message the events describe, as an SDK client does. */
function foldEvents(sse: string) {
  const events = sse
    .split('\n\n')
    .filter(Boolean)
    .map((chunk) => JSON.parse(/^data: (.*)$/m.exec(chunk)![1]));
  const message = events[0].message;
  for (const e of events) {
    if (e.type === 'content_block_start') message.content[e.index] = { ...e.content_block, partial: '' };
    if (e.type === 'content_block_delta' && e.delta.type === 'text_delta')
      message.content[e.index].text += e.delta.text;
    if (e.type === 'content_block_delta' && e.delta.type === 'input_json_delta')
      message.content[e.index].partial += e.delta.partial_json;
    if (e.type === 'message_delta') message.stop_reason = e.delta.stop_reason;
  }
  return { types: events.map((e) => e.type), message };
}

describe('scripted model server', () => {
  it('streams text and tool_use blocks as Messages API events', async () => {
    const server = await serve(toolTurn);
    const res = await post(server.url, {
      model: 'm',
      max_tokens: 100,
      stream: true,
      tools: TOOLS,
      messages: [{ role: 'user', content: 'go' }],
    });

    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const { types, message } = foldEvents(await res.text());
    expect(types).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(message.content[0].text).toBe('turn 0');
    expect(message.content[1]).toMatchObject({ type: 'tool_use', name: 'Bash' });
    expect(JSON.parse(message.content[1].partial)).toEqual({ command: 'echo hi' });
    expect(message.stop_reason).toBe('tool_use');
  });

  it('answers without streaming when asked, and passes tool results and turns to the scenario', async () => {
    const seen: unknown[] = [];
    const server = await serve((ctx) => {
      seen.push([ctx.turn, ctx.toolResults, ctx.call]);
      return { blocks: [{ type: 'text', text: 'done' }] };
    });
    const messages = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: {} }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', is_error: true, content: [{ type: 'text', text: 'exit 7' }] },
        ],
      },
    ];
    const body = await (await post(server.url, { model: 'm', max_tokens: 100, tools: TOOLS, messages })).json();

    expect(body).toMatchObject({
      type: 'message',
      role: 'assistant',
      content: [{ type: 'text', text: 'done' }],
      stop_reason: 'end_turn',
    });
    expect(seen).toEqual([[1, [{ toolUseId: 't1', isError: true, text: 'exit 7' }], 1]]);
  });

  it("keeps the CLI's own side requests away from the scenario", async () => {
    let calls = 0;
    const server = await serve(() => ((calls += 1), { blocks: [{ type: 'text', text: 'main' }] }));
    const quota = await (
      await post(server.url, {
        model: 'm',
        max_tokens: 1,
        tools: TOOLS,
        messages: [{ role: 'user', content: 'quota' }],
      })
    ).json();
    const title = await (
      await post(server.url, { model: 'haiku', max_tokens: 50, messages: [{ role: 'user', content: 'title?' }] })
    ).json();
    const count = await (
      await fetch(`${server.url}/v1/messages/count_tokens`, { method: 'POST', body: '{"messages":[]}' })
    ).json();
    const unknown = await fetch(`${server.url}/v1/elsewhere`, { method: 'POST', body: '{}' });

    expect(calls).toBe(0);
    expect([quota.content[0].text, title.content[0].text]).toEqual(['ok', 'ok']);
    expect(count.input_tokens).toBeGreaterThan(0);
    expect(unknown.status).toBe(404);
    expect(server.requests.map((r) => r.kind)).toEqual(['side', 'side', 'other', 'other']);
  });

  it('answers a failing scenario with a 400 the CLI does not retry, and records the error', async () => {
    const server = await serve(() => {
      throw new Error('no such story');
    });
    const res = await post(server.url, {
      model: 'm',
      max_tokens: 100,
      tools: TOOLS,
      messages: [{ role: 'user', content: 'go' }],
    });

    expect(res.status).toBe(400);
    expect(server.errors.map((e) => e.message)).toEqual(['no such story']);
  });

  it('drops a request whose upload is cut short (a CLI killed mid-request), and goes on answering', async () => {
    const server = await serve(toolTurn);
    const socket = net.connect(server.port, '127.0.0.1');
    socket.on('error', () => {});
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      'POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"model":',
    );
    await new Promise((resolve) => setTimeout(resolve, 100)); // let the server start reading the body
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.destroy();
    await closed;

    const res = await post(server.url, {
      model: 'm',
      max_tokens: 100,
      tools: TOOLS,
      messages: [{ role: 'user', content: 'go' }],
    });
    expect(res.status).toBe(200);
    await res.text();
    expect(server.mainRequests()).toHaveLength(1);
  });
});
