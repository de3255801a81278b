// `ralph.mjs hook start|stop`: the loop inside a Claude Code session (SPEC §12). `start` is what /ralph-loop runs;
// `stop` is the Stop hook. A refused start says why and what to type; the hook never fails a session (stop.ts).
import type { RunIo } from '../types.js';
import { LoopExit } from '../errors.js';
import { runHookStart } from './start.js';
import { readStdin, runHookStop } from './stop.js';

export async function runHookCommand(argv: readonly string[], io: RunIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'stop') return runHookStop(rest, io, readStdin);
  if (sub !== 'start') {
    io.stderr(
      `ralph: hook: expected \`hook start\` (what /ralph-loop runs) or \`hook stop\` (what ralphkit's Stop hook runs), not \`hook ${argv.join(' ')}\`; a session may stop\n`,
    );
    return 1;
  }
  try {
    return await runHookStart([...rest], io);
  } catch (err) {
    if (!(err instanceof LoopExit)) throw err;
    io.stderr(`ralph: ${err.message}\n${err.hint ? `ralph: hint: ${err.hint}\n` : ''}`);
    return err.code;
  }
}
