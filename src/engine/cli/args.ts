// The runner's command line (SPEC §4). This parser is the single source of truth: ralph.sh, `node ralph.mjs run`
// and `ralphkit run` all hand their raw arguments to it.
import { AGENT_NAMES, DELIVER_MODES, type RunOptions } from '../loop-options.js';
import { parseArgs } from 'node:util';
import { parseDuration } from '../core/duration.js';
import { completionWordProblem, DEFAULT_COMPLETION } from '../core/tags.js';
import { usageExit } from '../errors.js';
import { refuseUnboundedLoop, refuseWaitWithoutCeiling } from '../run/preflight.js';
import { refuseParallelOptions, webhookUrl } from '../run/options.js';
import { LOOP_ID } from '../store/layout.js';
import { AGENTS } from '../agents/index.js';

export interface ParsedRunArgs {
  options: RunOptions;
  /** Option keys the user typed, so a resumed loop only overrides what was asked for. */
  given: Set<keyof RunOptions>;
}

export const DEFAULT_OPTIONS: RunOptions = {
  agent: 'claude',
  prd: 'ralph/prd.json',
  prompt: 'ralph/prompt.md',
  resumeLast: false,
  maxIterations: 10,
  completionPromise: DEFAULT_COMPLETION,
  iterationTimeoutMs: 60 * 60_000,
  pauseMs: 2000,
  wait: false,
  waitNextSession: false,
  allowUnknownUsage: false,
  noProgressLimit: 3,
  json: false,
  dryRun: false,
  verifyInPlace: false,
  checkTimeoutMs: 10 * 60_000,
  repin: false,
  acceptPlanEdits: false,
  allowModifiedEngine: false,
  weakCheck: true,
  worktree: false,
  // On where bubblewrap can run it (run/sandbox-default.ts decides at start); --no-sandbox turns it off.
  sandbox: true,
  network: true,
  deliver: 'commit',
  mergeTimeoutMs: 60 * 60_000,
  acceptPinChanges: false,
  notify: false,
  help: false,
};

/** Every long option `run` accepts (the help test checks each is documented). */
export const RUN_FLAGS = () => Object.keys(SPEC);

const SPEC = {
  agent: { type: 'string' },
  'agent-cmd': { type: 'string' },
  prd: { type: 'string' },
  prompt: { type: 'string' },
  name: { type: 'string' },
  resume: { type: 'string' },
  'resume-last': { type: 'boolean' },
  'completion-promise': { type: 'string' },
  'iteration-timeout': { type: 'string' },
  'max-duration': { type: 'string' },
  pause: { type: 'string' },
  'max-cost': { type: 'string' },
  'max-usage': { type: 'string' },
  wait: { type: 'boolean' },
  'wait-next-session': { type: 'boolean' },
  'allow-unknown-usage': { type: 'boolean' },
  'no-progress-limit': { type: 'string' },
  json: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  'verify-in-place': { type: 'boolean' },
  'verify-in-worktree': { type: 'boolean' },
  'check-timeout': { type: 'string' },
  repin: { type: 'boolean' },
  'accept-plan-edits': { type: 'boolean' },
  'allow-modified-engine': { type: 'boolean' },
  'no-weak-check': { type: 'boolean' },
  worktree: { type: 'boolean' },
  parallel: { type: 'string' },
  sandbox: { type: 'boolean' },
  'no-sandbox': { type: 'boolean' },
  'no-network': { type: 'boolean' },
  deliver: { type: 'string' },
  'merge-timeout': { type: 'string' },
  'accept-pin-changes': { type: 'boolean' },
  notify: { type: 'boolean' },
  'on-exit': { type: 'string' },
  webhook: { type: 'string' },
  'review-agent': { type: 'string' },
  'review-cmd': { type: 'string' },
  'review-model': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Converter = (value: string | boolean) => unknown;
const CONVERT: Record<keyof typeof SPEC, [keyof RunOptions, Converter]> = {
  agent: ['agent', (v) => oneOf(String(v), AGENT_NAMES, '--agent')],
  'agent-cmd': ['agentCmd', (v) => nonEmpty(String(v), '--agent-cmd')],
  prd: ['prd', (v) => nonEmpty(String(v), '--prd')],
  prompt: ['prompt', (v) => nonEmpty(String(v), '--prompt')],
  name: ['name', (v) => loopId(String(v), '--name')],
  resume: ['resume', (v) => loopId(String(v), '--resume')],
  'resume-last': ['resumeLast', Boolean],
  'completion-promise': ['completionPromise', (v) => completionWord(String(v))],
  'iteration-timeout': ['iterationTimeoutMs', (v) => duration(String(v), '--iteration-timeout', 1)],
  // A Node timer holds at most 2^31-1 ms (24.8 days): a longer one would fire at once and stop every agent.
  'max-duration': [
    'maxDurationMs',
    (v) => duration(String(v), '--max-duration', 1, { ms: 24 * 86_400_000, text: '24d' }),
  ],
  pause: ['pauseMs', (v) => duration(String(v), '--pause', 0)],
  'max-cost': ['maxCost', (v) => number(String(v), '--max-cost', 0, Infinity)],
  'max-usage': ['maxUsage', (v) => number(String(v), '--max-usage', 0, 100)],
  wait: ['wait', Boolean],
  'wait-next-session': ['waitNextSession', Boolean],
  'allow-unknown-usage': ['allowUnknownUsage', Boolean],
  'no-progress-limit': ['noProgressLimit', (v) => integer(String(v), '--no-progress-limit', 1)],
  json: ['json', Boolean],
  'dry-run': ['dryRun', Boolean],
  'verify-in-place': ['verifyInPlace', Boolean],
  // The old name of today's default: checks in a fresh checkout of the commit.
  'verify-in-worktree': ['verifyInPlace', () => false],
  'check-timeout': ['checkTimeoutMs', (v) => duration(String(v), '--check-timeout', 1)],
  repin: ['repin', Boolean],
  'accept-plan-edits': ['acceptPlanEdits', Boolean],
  'allow-modified-engine': ['allowModifiedEngine', Boolean],
  'no-weak-check': ['weakCheck', () => false],
  worktree: ['worktree', Boolean],
  parallel: ['parallel', (v) => workers(String(v))],
  sandbox: ['sandbox', Boolean],
  'no-sandbox': ['sandbox', () => false],
  'no-network': ['network', () => false],
  deliver: ['deliver', (v) => deliverMode(String(v))],
  'merge-timeout': ['mergeTimeoutMs', (v) => duration(String(v), '--merge-timeout', 1)],
  'accept-pin-changes': ['acceptPinChanges', Boolean],
  notify: ['notify', Boolean],
  'on-exit': ['onExit', (v) => nonEmpty(String(v), '--on-exit')],
  webhook: ['webhook', (v) => webhookUrl(String(v))],
  'review-agent': ['reviewAgent', (v) => oneOf(String(v), AGENT_NAMES, '--review-agent', '--review-cmd')],
  'review-cmd': ['reviewCmd', (v) => nonEmpty(String(v), '--review-cmd')],
  'review-model': ['reviewModel', (v) => nonEmpty(String(v), '--review-model')],
  help: ['help', Boolean],
};

/** Each long option and the RunOptions key it sets (docs/options.md reads its default from DEFAULT_OPTIONS). */
export const RUN_OPTION_KEYS = Object.fromEntries(
  Object.entries(CONVERT).map(([flag, [key]]) => [flag, key]),
) as Record<string, keyof RunOptions>;

export function parseRunArgs(argv: string[]): ParsedRunArgs {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: SPEC, allowPositionals: true, strict: true });
  } catch (err) {
    throw usageExit(renderParseError((err as Error).message, argv));
  }
  const options: RunOptions = { ...DEFAULT_OPTIONS };
  const given = new Set<keyof RunOptions>();
  for (const [flag, value] of Object.entries(parsed.values)) {
    if (value === undefined) continue;
    const [key, convert] = CONVERT[flag as keyof typeof SPEC];
    (options as unknown as Record<string, unknown>)[key] = convert(value as string | boolean);
    given.add(key);
  }
  // A URL where max_iterations goes is a webhook typed without --webhook: said so, never echoed (it is a secret).
  if (parsed.positionals.some((p) => /^[a-z][a-z0-9+.-]*:\/\//i.test(p)))
    throw usageExit(
      'max_iterations must be a whole number, and a URL was given in its place (not shown: it may be a secret)',
      'a webhook URL goes after --webhook: ./ralph/ralph.sh --webhook <url>',
    );
  if (parsed.positionals.length > 1)
    throw usageExit(`expected at most one max_iterations, got: ${parsed.positionals.join(' ')}`);
  if (parsed.positionals.length === 1) {
    options.maxIterations = integer(parsed.positionals[0], 'max_iterations', 0);
    given.add('maxIterations');
  }
  if (options.resume && options.resumeLast) throw usageExit('use either --resume <id> or --resume-last, not both');
  if (options.name && (options.resume || options.resumeLast))
    throw usageExit('--name names a new loop; a resumed loop keeps its id');
  if (given.has('agent') && options.agentCmd) throw usageExit('use either --agent or --agent-cmd, not both');
  refuseReviewOptions(options);
  refuseParallelOptions(options, given);
  if (parsed.values.sandbox && parsed.values['no-sandbox'])
    throw usageExit('use either --sandbox or --no-sandbox, not both');
  if (parsed.values['verify-in-place'] && parsed.values['verify-in-worktree'])
    throw usageExit('use either --verify-in-place or --verify-in-worktree (the default), not both');
  // A resumed loop may have --max-usage stored; run.ts checks the merged options with the same rule.
  if (!options.resume && !options.resumeLast) {
    refuseWaitWithoutCeiling(options);
    refuseUnboundedLoop(options);
    if (given.has('mergeTimeoutMs') && options.deliver !== 'pr-merge')
      throw usageExit('--merge-timeout is how long --deliver pr-merge waits for CI: add --deliver pr-merge');
  }
  if (given.has('acceptPinChanges') && options.deliver !== 'pr-merge')
    throw usageExit(
      '--accept-pin-changes lets --deliver pr-merge merge a branch that changed pinned tests: add --deliver pr-merge',
    );
  return { options, given };
}

/** node:util's parse errors, said in the runner's words (a missing value, a negative max_iterations). */
export function renderParseError(message: string, argv: string[]): string {
  const missing = /^Option '(-[-\w]+)(?: <value>)?' argument missing/.exec(message);
  if (missing) return `${missing[1]} needs a value`;
  const ambiguous = /^Option '(-[-\w]+)' argument is ambiguous/.exec(message);
  if (ambiguous) {
    const next = argv[argv.indexOf(ambiguous[1]) + 1] ?? '';
    return `${ambiguous[1]} needs a value, but is followed by the option ${next}; if "${next}" is the value, write ${ambiguous[1]}=${next}`;
  }
  const negative = /^Unknown option '(-\d[^']*)'/.exec(message);
  if (negative) {
    // node reads "-10" as the short options -1 and -0; show what was typed.
    const typed = argv.find((a) => a.startsWith(negative[1])) ?? negative[1];
    return `max_iterations must be a whole number ≥ 0 (got "${typed}"; 0 means no cap)`;
  }
  return message.replace(/\. To specify a positional.*$/s, '');
}

/** At most this many workers: each is an agent, a worktree and its checks on a machine the user shares. */
export const MAX_WORKERS = 16;

function workers(value: string): number {
  const n = integer(value, '--parallel', 1);
  if (n > MAX_WORKERS) throw usageExit(`--parallel takes at most ${MAX_WORKERS} workers (got ${n})`);
  return n;
}

/** The reviewer's options make sense together (SPEC §11); the model flag is one the chosen agent has (agents/index.ts). */
function refuseReviewOptions(options: RunOptions): void {
  if (options.reviewAgent && options.reviewCmd) throw usageExit('use either --review-agent or --review-cmd, not both');
  if (options.reviewModel !== undefined && !options.reviewAgent && !options.reviewCmd)
    throw usageExit("--review-model needs a reviewer: add --review-agent <name> (or --review-cmd '<command>')");
  if (options.reviewModel !== undefined && options.reviewAgent && !AGENTS[options.reviewAgent].modelFlag) {
    throw usageExit(
      `--review-model: ${options.reviewAgent} has no model flag ralphkit knows; pick the model in a command instead, e.g. --review-cmd '${options.reviewAgent} ...'`,
    );
  }
}

function oneOf<T extends string>(value: string, allowed: readonly T[], flag: string, other = '--agent-cmd'): T {
  if (!allowed.includes(value as T))
    throw usageExit(`${flag} must be one of ${allowed.join(', ')} (got "${value}"); for another agent use ${other}`);
  return value as T;
}

function deliverMode(value: string): RunOptions['deliver'] {
  if (!DELIVER_MODES.includes(value as RunOptions['deliver']))
    throw usageExit(`--deliver must be one of ${DELIVER_MODES.join(', ')} (got "${value}")`);
  return value as RunOptions['deliver'];
}

function nonEmpty(value: string, flag: string): string {
  if (!value.trim()) throw usageExit(`${flag} needs a value`);
  return value;
}

function loopId(value: string, flag: string): string {
  if (!LOOP_ID.test(value)) {
    throw usageExit(`${flag} "${value}" is not a valid loop id: use letters, digits, ".", "_" and "-" (at most 64)`);
  }
  return value;
}

export function completionWord(value: string): string {
  const problem = completionWordProblem(value);
  if (problem) throw usageExit(`--completion-promise "${value}" cannot be the completion tag's word: ${problem}`);
  return value;
}

export function duration(value: string, flag: string, minMs: number, max?: { ms: number; text: string }): number {
  let ms: number;
  try {
    ms = parseDuration(value);
  } catch (err) {
    throw usageExit(`${flag}: ${(err as Error).message}`);
  }
  if (ms < minMs) throw usageExit(`${flag} must be more than 0`);
  if (max && ms > max.ms) throw usageExit(`${flag} must be at most ${max.text}`);
  return ms;
}

function number(value: string, flag: string, min: number, max: number): number {
  const n = Number(value);
  if (!value.trim() || !Number.isFinite(n) || n < min || n > max) {
    throw usageExit(
      `${flag} must be a number${max === Infinity ? ` ≥ ${min}` : ` from ${min} to ${max}`} (got "${value}")`,
    );
  }
  return n;
}

export function integer(value: string, flag: string, min: number): number {
  if (!/^\d+$/.test(value) || Number(value) < min)
    throw usageExit(`${flag} must be a whole number ≥ ${min} (got "${value}")`);
  return Number(value);
}
