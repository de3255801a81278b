// The agent's environment: the runner's own, minus the runner's secrets, plus the runner's variables and a marker
// that every process the agent starts inherits, so leftovers.ts can find them after the iteration.
import { randomBytes } from 'node:crypto';

export interface AgentEnvPlan {
  env: NodeJS.ProcessEnv;
  /** The value of RALPH_AGENT_MARK in `env`: new for every call, so each iteration's processes are told apart. */
  token: string;
  /** Names of the variables taken out of `base`, sorted; never their values. */
  removed: string[];
}

// Tokens the runner uses for itself (push, pull requests, usage, webhooks). The agent's own credentials
// (ANTHROPIC_API_KEY, OPENAI_API_KEY, CLAUDE_CODE_OAUTH_TOKEN, ...) stay: without them it cannot work.
const RUNNER_SECRETS = new Set([
  'GH_TOKEN',
  'GITHUB_TOKEN',
  'GH_ENTERPRISE_TOKEN',
  'GITHUB_ENTERPRISE_TOKEN',
  'RALPH_USAGE_TOKEN',
  'RALPH_WEBHOOK_URL',
]);
// Whatever the runner may grow later under its own prefix is a secret by name, so a new option is safe by default.
const RUNNER_SECRET_PATTERN = /^RALPH_.*(TOKEN|SECRET|WEBHOOK)/;

export const AGENT_MARK_VAR = 'RALPH_AGENT_MARK';

/** The environment to start the agent with (pure but for the random marker). */
export function planAgentEnv(base: NodeJS.ProcessEnv, extra: Record<string, string>): AgentEnvPlan {
  const env: NodeJS.ProcessEnv = {};
  const removed: string[] = [];
  for (const [name, value] of Object.entries(base)) {
    if (isRunnerSecret(name)) removed.push(name);
    else env[name] = value;
  }
  const token = randomBytes(16).toString('hex');
  Object.assign(env, extra, { RALPH_RUNNER: '1', [AGENT_MARK_VAR]: token });
  return { env, token, removed: removed.sort() };
}

/** Whether `name` is one of the runner's secrets. Upper-cased first: Windows matches variable names in any case. */
export function isRunnerSecret(name: string): boolean {
  const upper = name.toUpperCase();
  return RUNNER_SECRETS.has(upper) || RUNNER_SECRET_PATTERN.test(upper);
}
