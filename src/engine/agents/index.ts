// How each agent is started and where its final message comes from (SPEC §4). Flags are the ones confirmed
// against each CLI's real --help (docs/agents.md); the binary can be overridden per agent for tests and
// unusual installs with RALPH_<AGENT>_BIN (e.g. RALPH_CLAUDE_BIN=/opt/claude/bin/claude).
import path from 'node:path';
import { CLAUDE_ARGS } from './claude.js';
import { SHELL } from '../../util/which.js';
import type { AgentName } from '../loop-options.js';

export interface AgentPlan {
  /** The executable and its arguments; never run through a shell except for --agent-cmd (`sh -c`). */
  file: string;
  args: string[];
  /** Passed on stdin. */
  input: string;
  /** Codex writes its last message to a file; read it after the run. */
  lastMessageFile?: string;
  /** How stdout is read: stream-json events (claude), JSONL events (codex), one JSON document (gemini), or plain text. */
  output: 'claude-stream' | 'codex-json' | 'gemini-json' | 'text';
  /** The command `file args` runs inside a wrapper (the sandbox: `bwrap ... -- sh -c <agent-cmd>`), for reading its failures. */
  inner?: { file: string; args: string[] };
}

export interface AgentSpec {
  bin: string;
  /** The npm package that provides `bin`, for the hint when it is missing (docs/agents.md). */
  npmPackage: string;
  /** Arguments; `prompt` is given for agents that take it as an argument, `lastMessageFile` for codex. */
  args(ctx: { prompt: string; lastMessageFile: string }): string[];
  promptOnStdin: boolean;
  usesLastMessageFile?: boolean;
  output: AgentPlan['output'];
  /**
   * The flag that picks a model (--review-model), as each CLI's --help names it, and where it goes among the
   * arguments (default: at the end). Absent: ralphkit knows no such flag for this agent (amp picks modes, not models).
   */
  modelFlag?: string;
  modelAt?: number;
}

export const AGENTS: Record<AgentName, AgentSpec> = {
  claude: {
    bin: 'claude',
    npmPackage: '@anthropic-ai/claude-code',
    args: () => CLAUDE_ARGS,
    promptOnStdin: true,
    output: 'claude-stream',
    modelFlag: '--model',
  },
  codex: {
    bin: 'codex',
    npmPackage: '@openai/codex',
    // --json: JSONL events on stdout, for the live tool lines; the final message still comes from the file.
    args: ({ lastMessageFile }) => [
      'exec',
      '--json',
      '--dangerously-bypass-approvals-and-sandbox',
      '--output-last-message',
      lastMessageFile,
      '-',
    ],
    promptOnStdin: true,
    usesLastMessageFile: true,
    output: 'codex-json',
    // An option of `codex exec` (-m, --model), so right after the subcommand.
    modelFlag: '--model',
    modelAt: 1,
  },
  // Execute mode reads the prompt from stdin and prints only the last assistant message. --dangerously-allow-all
  // is not in `amp --help` but is accepted (docs/agents.md); it is the flag form of amp.dangerouslyAllowAll.
  amp: {
    bin: 'amp',
    npmPackage: '@sourcegraph/amp',
    args: () => ['--dangerously-allow-all', '--execute'],
    promptOnStdin: true,
    output: 'text',
  },
  // `opencode run` reads the message from stdin when it is not a terminal (not in its --help; see docs/agents.md);
  // without --auto it rejects every permission request in non-interactive mode.
  opencode: {
    bin: 'opencode',
    npmPackage: 'opencode-ai',
    args: () => ['run', '--auto'],
    promptOnStdin: true,
    output: 'text',
    modelFlag: '--model',
  },
  // Headless when stdin is piped. Without --skip-trust an untrusted folder silently turns --yolo back into
  // "ask for approval". The json output's `response` holds the final text (its stream-json result has none).
  gemini: {
    bin: 'gemini',
    npmPackage: '@google/gemini-cli',
    args: () => ['--skip-trust', '--yolo', '--output-format', 'json'],
    promptOnStdin: true,
    output: 'gemini-json',
    modelFlag: '--model',
  },
};

export interface PlanAgentInput {
  agent: AgentName;
  agentCmd?: string;
  prompt: string;
  /** Folder of the loop's runtime files (for codex's last-message file). */
  runDir: string;
  iteration: number;
  env: NodeJS.ProcessEnv;
  /** A model for the agent's own model flag (the reviewer's --review-model); ignored for a shell command. */
  model?: string;
  /** The name of Codex's last-message file (default `iteration-N.last-message.txt`). */
  lastMessageName?: string;
}

/** RALPH_CLAUDE_BIN, RALPH_CODEX_BIN, ...: the variable that overrides an agent's binary. */
export function agentBinVar(agent: AgentName): string {
  return `RALPH_${agent.toUpperCase()}_BIN`;
}

/**
 * Why the agent's binary could not be found, naming the variable that pointed somewhere when one did (the
 * user typed that path, and "not on PATH" would send them looking in the wrong place), and what to type next.
 */
export function renderMissingAgent(agent: AgentName, env: NodeJS.ProcessEnv): { message: string; hint: string } {
  const name = agentBinVar(agent);
  const given = env[name];
  const other = "or run another agent with --agent-cmd '<command>'";
  if (given) {
    const where = given.includes('/') ? 'which is not an executable file' : 'which is not an executable on PATH';
    return {
      message: `the ${agent} CLI was not found: ${name} is set to ${JSON.stringify(given)}, ${where}`,
      hint: `point ${name} at the ${agent} binary (export ${name}=/path/to/${AGENTS[agent].bin}), unset it to use "${AGENTS[agent].bin}" from PATH, ${other}`,
    };
  }
  return {
    message: `the ${agent} CLI was not found: no executable "${AGENTS[agent].bin}" on PATH`,
    hint: `install it (npm install -g ${AGENTS[agent].npmPackage}), or set ${name}=/path/to/${AGENTS[agent].bin}, ${other}`,
  };
}

export function planAgent(input: PlanAgentInput): AgentPlan {
  if (input.agentCmd !== undefined)
    return { file: SHELL, args: ['-c', input.agentCmd], input: input.prompt, output: 'text' };
  const spec = AGENTS[input.agent];
  const lastMessageFile = path.join(
    input.runDir,
    input.lastMessageName ?? `iteration-${input.iteration}.last-message.txt`,
  );
  const args = [...spec.args({ prompt: input.prompt, lastMessageFile })];
  if (input.model !== undefined && spec.modelFlag)
    args.splice(spec.modelAt ?? args.length, 0, spec.modelFlag, input.model);
  return {
    file: input.env[agentBinVar(input.agent)] || spec.bin,
    args,
    input: spec.promptOnStdin ? input.prompt : '',
    lastMessageFile: spec.usesLastMessageFile ? lastMessageFile : undefined,
    output: spec.output,
  };
}

/** The command line as the user would type it, for logs and --dry-run (the prompt argument is elided). */
export function renderAgentCommand(plan: AgentPlan, prompt: string): string {
  const args = plan.args.map((a) => (a === prompt && prompt.length > 0 ? '<prompt>' : quote(a)));
  const line = [quote(plan.file), ...args].join(' ');
  return plan.input ? `${line} < <prompt>` : line;
}

export function quote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
