// Turns one agent run into an AgentResult: plans the command, streams output into the iteration log and
// the live tool lines, and picks the final message (result event, last-message file, or the tail of stdout).
import { createWriteStream, openSync, rmSync, type WriteStream } from 'node:fs';
import type { AgentResult } from '../types.js';
import { type AgentPlan } from './index.js';
import { OutputReader, readGeminiJson } from './output.js';
import { runProcess, type ProcessResult } from './process.js';
import { readShellRefusal, renderFailureLines, renderShellRefusalExit } from './failure.js';
import { OUTPUT_LIMITS, readFileTail } from './tail.js';
import { guardWrite, renderWriteError } from '../errors.js';

export interface AgentRunRequest {
  plan: AgentPlan;
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal: AbortSignal;
  logFile: string;
  onTool(text: string): void;
  onStart?(pid: number): void;
}

export async function runAgentOnce(req: AgentRunRequest): Promise<AgentResult> {
  const log = openLog(req);
  const start = guardOnStart(req);
  const reader = new OutputReader(req.plan.output, req.onTool);
  if (req.plan.lastMessageFile) rmSync(req.plan.lastMessageFile, { force: true });
  let r: ProcessResult;
  try {
    r = await runProcess({
      file: req.plan.file,
      args: req.plan.args,
      cwd: req.cwd,
      input: req.plan.input,
      env: req.env,
      timeoutMs: req.timeoutMs,
      signal: start.signal,
      log: log.stream,
      onStdoutLine: reader.readsLines ? (line) => reader.line(line) : undefined,
      onStart: start.onStart,
    });
  } finally {
    start.dispose();
  }
  if (r.spawnError) log.stream.write(`\n[ralph] could not start the agent: ${r.spawnError}\n`);
  await log.close();
  start.rethrow();
  const result = toResult(req, r, reader);
  if (r.skippedLines > 0)
    req.onTool(
      `${r.skippedLines} line(s) of the agent's output were longer than ${OUTPUT_LIMITS.line / 1024 / 1024} MiB and were not read (they are in the log)`,
    );
  reportFailure(req, r, result);
  return result;
}

function toResult(req: AgentRunRequest, r: ProcessResult, reader: OutputReader): AgentResult {
  return {
    exitCode: r.exitCode,
    signal: r.signal,
    timedOut: r.timedOut,
    stdout: r.stdout,
    stderr: r.spawnError ? `${r.stderr}${r.spawnError}\n` : r.stderr,
    finalMessage: pickFinalMessage(req.plan, r, reader),
    costUsd: reader.costUsd,
    ...(reader.resultEvents ? { resultEvents: reader.resultEvents } : {}),
    ...(reader.rateLimit ? { rateLimit: reader.rateLimit } : {}),
    durationMs: r.durationMs,
  };
}

/**
 * A failed run shows the tail of what the agent printed (as live lines, under its iteration) and where its log
 * is, so a broken agent is visible without opening the log. A command the shell could not start ends the loop.
 */
function reportFailure(req: AgentRunRequest, r: ProcessResult, result: AgentResult): void {
  // An agent stopped by the runner (Ctrl-C, cancel) did not fail.
  if (r.aborted || (result.exitCode === 0 && !result.timedOut)) return;
  const refusal = readShellRefusal(req.plan, result);
  // RALPH_ITERATION is the runner's own contract with the agent, set for every run.
  if (refusal)
    throw renderShellRefusalExit(req.plan, refusal, Number(req.env.RALPH_ITERATION ?? 1), req.logFile, req.cwd);
  for (const line of renderFailureLines(result, req.logFile, req.cwd)) req.onTool(line);
}

/**
 * The iteration log, opened before the agent starts so a log that cannot be created stops the loop before any
 * work is done. A write that fails later (disk full) must not crash the runner mid-iteration: the agent is
 * left to finish, and close() throws the error.
 */
function openLog(req: AgentRunRequest): { stream: WriteStream; close(): Promise<void> } {
  const fd = guardWrite(req.logFile, req.cwd, () => openSync(req.logFile, 'a'), 'the agent was not started');
  const stream = createWriteStream(req.logFile, { fd });
  let failure: Error | undefined;
  stream.on('error', (err) => {
    failure ??= err;
  });
  return {
    stream,
    async close() {
      // 'close' comes after 'error' too, so a failure of the last write is seen here.
      if (!stream.closed) {
        await new Promise<void>((resolve) => {
          stream.once('close', () => resolve());
          stream.end();
        });
      }
      if (failure)
        throw renderWriteError(
          req.logFile,
          req.cwd,
          failure,
          'the agent ran but its output is missing from the log; the iteration is repeated on resume',
        );
    },
  };
}

/**
 * onStart saves the agent's pid in state.json from inside a process event, where a throw would crash the
 * runner: the error is kept, the agent stopped through its own signal, and rethrow() raises it afterwards.
 */
function guardOnStart(req: AgentRunRequest) {
  let failure: { err: unknown } | undefined;
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  req.signal.addEventListener('abort', onAbort, { once: true });
  if (req.signal.aborted) stop.abort();
  const onStart =
    req.onStart &&
    ((pid: number) => {
      try {
        req.onStart?.(pid);
      } catch (err) {
        failure = { err };
        stop.abort();
      }
    });
  return {
    signal: stop.signal,
    onStart,
    dispose: () => req.signal.removeEventListener('abort', onAbort),
    rethrow(): void {
      if (failure) throw failure.err;
    },
  };
}

/** Every source is bounded: an event's text, a file's tail, stdout's tail (OUTPUT_LIMITS). */
function pickFinalMessage(plan: AgentPlan, r: ProcessResult, reader: OutputReader): string {
  if (plan.output === 'claude-stream') return reader.finalMessage ?? '';
  // Past the tail's bound the document's start is gone: what is left is shown as text.
  if (plan.output === 'gemini-json') return (r.stdoutCut ? null : readGeminiJson(r.stdout)) ?? r.stdout;
  if (plan.output === 'codex-json')
    return withError(readLastMessage(plan) ?? reader.finalMessage ?? '', reader.error) || r.stdout;
  return readLastMessage(plan) ?? r.stdout;
}

// No file: the agent failed before answering; what it printed is the best account of what happened.
function readLastMessage(plan: AgentPlan): string | null {
  return plan.lastMessageFile ? readFileTail(plan.lastMessageFile, OUTPUT_LIMITS.finalMessage) : null;
}

// A failed turn's error (a usage limit, a refused request) goes with the final message, where the runner's rate-limit
// and transient-failure checks read it: in JSON mode Codex prints it only as an event.
function withError(message: string, error: string | undefined): string {
  return error ? `${message}${message ? '\n' : ''}${error}` : message;
}
