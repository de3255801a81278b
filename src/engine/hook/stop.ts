// `ralph.mjs hook stop`: Claude Code's Stop hook (SPEC §12, docs/agents.md "Claude Code Stop hooks"). It reads the hook
// input on stdin and, for a session that started no in-session loop, lets the session stop: exit 0, nothing printed.
// No session can start one yet (the /ralph-loop command is the next step), so today every stop is let through.
// It never blocks: it never prints a decision and never exits 2; on an error it exits 1, which Claude Code shows as a
// hook problem and then lets the session stop (measured on Claude Code 2.1.332).
import type { RunIo } from '../types.js';

/** What the Stop hook input carries that the hook reads (the full sample is in docs/agents.md). */
export interface StopHookInput {
  sessionId: string;
  stopHookActive: boolean;
  cwd?: string;
  transcriptPath?: string;
}

/** A session id names a folder under ralph/.runs/: letters, digits, `.`, `_`, `-`, never a path. */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** More than any hook input Claude Code sends (its last assistant message included), less than a runaway pipe. */
const MAX_INPUT_BYTES = 16 * 1024 * 1024;

export async function runHookStop(argv: readonly string[], io: RunIo, readInput: () => Promise<string>): Promise<number> {
  if (argv.length !== 0) {
    io.stderr(`ralph: hook stop: takes no arguments (got ${argv.join(' ')}); the session may stop\n`);
    return 1;
  }
  // The runner's own agent runs never loop inside the session: the runner already restarts them.
  if (io.env.RALPH_RUNNER === '1') return 0;
  try {
    parseStopHookInput(await readInput());
  } catch (err) {
    io.stderr(`ralph: hook stop: ${(err as Error).message}; letting the session stop\n`);
    return 1;
  }
  return 0;
}

/** Pure: the fields the hook needs, or an error saying what is wrong with the input. */
export function parseStopHookInput(text: string): StopHookInput {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new Error(`the hook input on stdin is not JSON (${text.trim() ? `${text.length} characters` : 'it is empty'}); Claude Code sends a JSON object`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new Error('the hook input on stdin is not a JSON object');
  const input = data as Record<string, unknown>;
  if (input.hook_event_name !== undefined && input.hook_event_name !== 'Stop') {
    throw new Error(`the hook input is for ${JSON.stringify(input.hook_event_name)}, not Stop: configure \`ralph.mjs hook stop\` under "Stop" only`);
  }
  if (typeof input.session_id !== 'string' || !SESSION_ID.test(input.session_id)) throw new Error('the hook input has no usable session_id');
  return {
    sessionId: input.session_id,
    stopHookActive: input.stop_hook_active === true,
    cwd: typeof input.cwd === 'string' ? input.cwd : undefined,
    transcriptPath: typeof input.transcript_path === 'string' ? input.transcript_path : undefined,
  };
}

/** The process's stdin, whole; refused when it is a terminal (a person typed the command) or too large. */
export async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new Error("no hook input: stdin is a terminal; Claude Code runs this command with the Stop hook's JSON on stdin");
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_INPUT_BYTES) throw new Error(`the hook input on stdin is larger than ${MAX_INPUT_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
