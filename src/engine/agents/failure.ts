// What the terminal shows of a failed agent run, and the one failure that no retry can fix: an --agent-cmd the
// shell could not find or run (a typo, a tool not installed). Retrying that for minutes overnight only hides it.
import type { AgentResult } from '../types.js';
import { quote, type AgentPlan } from './index.js';
import { LoopExit, LOOP_EXIT, EXIT_FAILURE } from '../errors.js';
import { showPath } from '../../util/repo-path.js';
import { stripAnsi } from '../../util/ansi.js';
import { SHELL } from '../../util/which.js';

const TAIL_LINES = 5;
const LINE_MAX = 200;
// dash "sh: 1: x: not found", bash as sh "sh: line 1: x: command not found" / "sh: x: command not found", and the
// same shapes for "Permission denied" (exit 126). Only the outer shell's own line counts: a script the command
// runs prefixes its complaints with its own name, and those are the agent's failures, not the command's.
const SHELL_REFUSAL =
  /^(?:\/\S*\/)?sh: (?:(?:line )?\d+: )?.+: (?:(?:command )?not found|Permission denied|No such file or directory|cannot execute.*|Is a directory)$/;

type Printed = Pick<AgentResult, 'stderr' | 'stdout' | 'finalMessage'>;

/** The last few non-blank lines the agent printed: stderr if any, else its final message, else its stdout. */
export function readOutputTail(result: Printed): { source: 'stderr' | 'output'; lines: string[] } | null {
  for (const [source, text] of [
    ['stderr', result.stderr],
    ['output', result.finalMessage],
    ['output', result.stdout],
  ] as const) {
    const lines = splitLines(text);
    if (lines.length)
      return {
        source,
        lines: lines.slice(-TAIL_LINES).map((l) => (l.length > LINE_MAX ? `${l.slice(0, LINE_MAX)}…` : l)),
      };
  }
  return null;
}

/** The lines shown under a failed run: why it failed, where its full log is, and the tail of what it printed. */
export function renderFailureLines(result: AgentResult, logFile: string, cwd: string): string[] {
  const how = result.timedOut
    ? 'timed out'
    : result.exitCode !== null
      ? `failed (exit ${result.exitCode})`
      : result.signal
        ? `was killed by ${result.signal}`
        : 'could not be started';
  const tail = readOutputTail(result);
  const log = showPath(cwd, logFile);
  if (!tail) return [`the agent ${how} and printed nothing; log: ${log}`];
  return [`the agent ${how}; last lines of its ${tail.source} (full log: ${log}):`, ...tail.lines.map((l) => `  ${l}`)];
}

/** The shell's own "not found" / "Permission denied" line when `sh -c <agent-cmd>` could not start the command. */
export function readShellRefusal(wrapped: AgentPlan, result: AgentResult): string | null {
  // Under the sandbox the shell runs inside bwrap, which passes its exit code and stderr on.
  const plan = wrapped.inner ?? wrapped;
  if (plan.file !== SHELL || plan.args[0] !== '-c' || (result.exitCode !== 126 && result.exitCode !== 127)) return null;
  return splitLines(result.stderr).find((l) => SHELL_REFUSAL.test(l)) ?? null;
}

/**
 * Ends the loop for an agent command that cannot run. Exit 2 (refused to start) when it happens in the first
 * iteration: the agent never ran, so nothing was changed. Later (the command worked before, or a resumed loop
 * with a new --agent-cmd) earlier iterations did change things, so it is 1, the code for bad usage.
 */
export function renderShellRefusalExit(
  plan: AgentPlan,
  refusal: string,
  iteration: number,
  logFile: string,
  cwd: string,
): LoopExit {
  const command = (plan.inner ?? plan).args[1] ?? '';
  const code = iteration <= 1 ? LOOP_EXIT.refused : EXIT_FAILURE;
  return new LoopExit(
    code,
    `the agent command could not run in iteration ${iteration}: the shell said "${refusal}" (command: ${command}; log: ${showPath(cwd, logFile)})`,
    `check the command given to --agent-cmd (a typo? installed? on PATH? executable?); ./ralph/ralph.sh --dry-run --agent-cmd ${quote(command)} shows what would run and checks it without running it`,
  );
}

function splitLines(text: string): string[] {
  return stripAnsi(text)
    .split(/\r?\n/)
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== '');
}
