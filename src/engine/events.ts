// What the loop reports as it goes: a short human line on stderr, and with --json also one JSON line per event
// on stdout, so stdout stays machine-readable and stderr is for people.
import { renderUsd } from '../util/usd.js';
import { renderTerminalJson } from '../util/ansi.js';

export type LoopEvent = LoopEventBody & {
  /** The worker of a --parallel run the event is about (1..n); absent for the run as a whole. */
  worker?: number;
};

type LoopEventBody =
  | {
      type: 'start';
      loop: string;
      agent: string;
      command: string;
      prd: string;
      maxIterations: number;
      resumed: boolean;
      firstIteration: number;
    }
  | { type: 'info' | 'warn'; message: string; iteration?: number }
  | { type: 'iteration-start'; iteration: number; maxIterations: number }
  | { type: 'tool'; iteration: number; text: string }
  | {
      type: 'agent-exit';
      iteration: number;
      exitCode: number | null;
      signal: string | null;
      timedOut: boolean;
      durationMs: number;
      costUsd?: number;
      tag: string | null;
    }
  | { type: 'rate-limit'; iteration: number; message: string; waitMs: number; resetAt: string | null }
  | { type: 'retry'; iteration: number; attempt: number; reason: string; waitMs: number }
  | {
      type: 'verify';
      iteration: number;
      verdicts: { id: string; status: string; reason?: string }[];
      restored: string[];
      allPass: boolean;
    }
  | { type: 'iteration-end'; iteration: number; newCommit: boolean; noProgressStreak: number; costUsd: number }
  | {
      type: 'exit';
      loop: string;
      code: number;
      status: string;
      message: string;
      hint?: string;
      iteration: number;
      costUsd: number;
      stateError?: string;
    };

export type Emit = (event: LoopEvent) => void;

/** max_iterations as people read it: 0 is no cap (the JSON events keep the number). */
export function renderMaxIterations(max: number): string {
  return max === 0 ? '∞' : String(max);
}

const ISO = () => new Date().toISOString();
const BANNER = '━━ ';

export function createEmitter(json: boolean, out: (s: string) => void, err: (s: string) => void): Emit {
  // --agent-cmd agents report no cost: "cost so far $0.0000" every iteration would read as a measured, free run.
  let costReported = false;
  return (event) => {
    if (event.type === 'agent-exit' && event.costUsd !== undefined) costReported = true;
    if (json) out(`${renderTerminalJson({ time: ISO(), ...event })}\n`);
    const line = renderHuman(event, costReported);
    if (line !== null) err(`${line}\n`);
  };
}

/**
 * A --parallel worker's lines, tagged `[w2] ` so interleaved workers can be told apart; the iteration banner keeps
 * its rule first (`━━ [w2] iteration 5/10 ━━`) and the blank line before it stays blank.
 */
function tagWorker(text: string, worker: number): string {
  const tag = `[w${worker}] `;
  return text
    .split('\n')
    .map((line) =>
      line === '' ? line : line.startsWith(BANNER) ? `${BANNER}${tag}${line.slice(BANNER.length)}` : `${tag}${line}`,
    )
    .join('\n');
}

/** `costReported`: an agent run of this loop reported a cost; the cost so far is shown only then (or when above 0, on resume). */
export function renderHuman(e: LoopEvent, costReported = false): string | null {
  const text = renderBody(e, costReported);
  return text === null || e.worker === undefined ? text : tagWorker(text, e.worker);
}

function renderBody(e: LoopEvent, costReported: boolean): string | null {
  switch (e.type) {
    case 'start':
      return `ralph: loop ${e.loop} ${e.resumed ? 'resumed' : 'started'} · agent ${e.agent} · ${e.prd} · iterations ${e.firstIteration}..${renderMaxIterations(e.maxIterations)}\nralph: agent command: ${e.command}`;
    case 'info':
      return `ralph: ${e.message}`;
    case 'warn':
      return `ralph: warning: ${e.message}`;
    case 'iteration-start':
      return `\n${BANNER}iteration ${e.iteration}/${renderMaxIterations(e.maxIterations)} ━━`;
    case 'tool':
      return `  · ${e.text}`;
    case 'agent-exit':
      return `ralph: agent ${e.timedOut ? 'timed out and was killed' : `exited ${e.exitCode ?? e.signal}`} after ${Math.round(e.durationMs / 100) / 10}s${e.costUsd !== undefined ? ` · ${renderUsd(e.costUsd)}` : ''}${e.tag ? ` · said ${e.tag.toUpperCase()}` : ''}`;
    case 'rate-limit':
      return `ralph: rate limit: ${e.message.trim()} — waiting ${Math.ceil(e.waitMs / 1000)}s${e.resetAt ? ` (until ${e.resetAt})` : ''}, then repeating iteration ${e.iteration}`;
    case 'retry':
      return `ralph: ${e.reason}; retry ${e.attempt} of iteration ${e.iteration} in ${Math.ceil(e.waitMs / 1000)}s`;
    case 'verify':
      // verify.ts already logs each verdict and restored field as it decides them.
      return null;
    case 'iteration-end':
      return `ralph: iteration ${e.iteration} done · ${e.newCommit ? 'new commit' : `no new commit (${e.noProgressStreak} in a row)`}${costReported || e.costUsd > 0 ? ` · cost so far ${renderUsd(e.costUsd)}` : ''}`;
    case 'exit':
      return `ralph: ${e.message} (exit ${e.code})${e.stateError ? `\nralph: error: ${e.stateError}` : ''}${e.hint ? `\nralph: hint: ${e.hint}` : ''}`;
  }
}
