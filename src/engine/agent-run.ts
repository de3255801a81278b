// Turns one agent run into an AgentResult: plans the command, streams output into the iteration log and
// the live tool lines, and picks the final message (result event, last-message file, or all stdout).
import { createWriteStream, readFileSync, rmSync } from 'node:fs';
import type { AgentResult } from './contracts.js';
import { OutputReader, readGeminiJson, type AgentPlan } from './agents/index.js';
import { runProcess } from './agent-process.js';

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
  const log = createWriteStream(req.logFile, { flags: 'a' });
  const reader = new OutputReader(req.plan.output, req.onTool);
  if (req.plan.lastMessageFile) rmSync(req.plan.lastMessageFile, { force: true });
  const r = await runProcess({
    file: req.plan.file,
    args: req.plan.args,
    cwd: req.cwd,
    input: req.plan.input,
    env: req.env,
    timeoutMs: req.timeoutMs,
    signal: req.signal,
    log,
    onStdoutLine: (line) => reader.line(line),
    onStart: req.onStart,
  });
  if (r.spawnError) log.write(`\n[ralph] could not start the agent: ${r.spawnError}\n`);
  await new Promise<void>((resolve) => log.end(resolve));
  return {
    exitCode: r.exitCode,
    signal: r.signal,
    timedOut: r.timedOut,
    stdout: r.stdout,
    stderr: r.spawnError ? `${r.stderr}${r.spawnError}\n` : r.stderr,
    finalMessage: pickFinalMessage(req.plan, r.stdout, reader),
    costUsd: reader.costUsd,
    ...(reader.rateLimit ? { rateLimit: reader.rateLimit } : {}),
    durationMs: r.durationMs,
  };
}

function pickFinalMessage(plan: AgentPlan, stdout: string, reader: OutputReader): string {
  if (plan.output === 'claude-stream') return reader.finalMessage ?? '';
  if (plan.output === 'gemini-json') return readGeminiJson(stdout) ?? stdout;
  if (plan.lastMessageFile) {
    try {
      return readFileSync(plan.lastMessageFile, 'utf8');
    } catch {
      // No file: the agent failed before answering; its stdout is the best account of what happened.
    }
  }
  return stdout;
}
