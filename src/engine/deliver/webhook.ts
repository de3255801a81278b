// --webhook <url>: the loop's summary POSTed as {"text": ...}, the incoming-webhook shape Slack and Mattermost take
// (Discord takes it at its webhook URL with /slack appended). The URL is the webhook's only key, so it is a secret:
// no message names it (not even its host), it is never stored, and the agent's environment never holds it. One
// request, no redirects, no pooled connection, and a deadline on the whole exchange; every failure is one warning.
import http from 'node:http';
import https from 'node:https';

/** The deadline of the whole request, from connecting to the end of the answer. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

/** The request body: Slack's incoming-webhook message with its one required field. */
export function renderWebhookBody(summary: string): string {
  return JSON.stringify({ text: summary });
}

/** POSTs the summary; resolves within the deadline, never rejects; `warn` gets at most one message. */
export function postWebhook(
  url: string,
  summary: string,
  signal: AbortSignal,
  warn: (message: string) => void,
  timeoutMs = WEBHOOK_TIMEOUT_MS,
): Promise<void> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (problem: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      req.destroy();
      if (problem) warn(`--webhook: ${problem}; the loop's exit code is unchanged`);
      resolve();
    };
    const body = Buffer.from(renderWebhookBody(summary));
    const target = new URL(url);
    const client = target.protocol === 'https:' ? https : http;
    const req = client.request(target, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', 'content-length': body.length, connection: 'close' },
    });
    const timer = setTimeout(() => settle(`no answer within ${timeoutMs / 1000}s; the request was dropped`), timeoutMs);
    const onAbort = () => settle('stopped by an interrupt');
    signal.addEventListener('abort', onAbort, { once: true });
    req.on('response', (res) => {
      res.resume();
      const status = res.statusCode ?? 0;
      res.on('end', () =>
        settle(
          status >= 200 && status < 300
            ? null
            : `the webhook answered HTTP ${status}, so the summary may not have arrived`,
        ),
      );
      res.on('error', () => settle(`the answer was cut off (HTTP ${status})`));
    });
    // Only the error's code: Node's messages can quote the address, and a URL's host or path may be the secret.
    req.on('error', (err: NodeJS.ErrnoException) => settle(`the request failed (${err.code ?? 'network error'})`));
    req.end(body);
    if (signal.aborted) onAbort();
  });
}
