// The OAuth access token Claude Code stores after `claude` login, read fresh on every call because Claude Code
// refreshes it in place while it runs. The token is a secret: it leaves this module only as a return value and
// never appears in an error message.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';

export const KEYCHAIN_SERVICE = 'Claude Code-credentials';

export interface ResolveTokenOptions {
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  home?: string;
  /** Runs `security find-generic-password -s <service> -w` and returns its stdout; injectable for tests. */
  readKeychain?: (service: string) => Promise<string>;
}

export interface StoredCredentials {
  accessToken: string;
  /** Unix milliseconds, when Claude Code recorded one. */
  expiresAt?: number;
}

/** Token for the usage endpoint: RALPH_USAGE_TOKEN, else the macOS Keychain item, else the credentials file. */
export async function resolveUsageToken(options: ResolveTokenOptions = {}): Promise<string> {
  const env = options.env ?? process.env;
  const override = env.RALPH_USAGE_TOKEN?.trim();
  if (override) return override;
  const tried: string[] = [];
  if ((options.platform ?? process.platform) === 'darwin') {
    const fromKeychain = await readFromKeychain(env, options.readKeychain ?? securityFindPassword, tried);
    if (fromKeychain) return fromKeychain;
  }
  const file = credentialsFile(env, options.home ?? homedir());
  tried.push(file);
  const text = await readFile(file, 'utf8').catch(() => null);
  const creds = text === null ? null : parseCredentials(text);
  if (creds) return creds.accessToken;
  throw new Error(
    `no Claude Code login found (looked in ${tried.join(', ')}); log in once with \`claude\`, or set RALPH_USAGE_TOKEN`,
  );
}

/** `$CLAUDE_CONFIG_DIR/.credentials.json`, default `~/.claude/.credentials.json`. */
export function credentialsFile(env: NodeJS.ProcessEnv, home: string): string {
  return path.join(env.CLAUDE_CONFIG_DIR || path.join(home, '.claude'), '.credentials.json');
}

/** `{"claudeAiOauth": {"accessToken": "...", "expiresAt": <ms>, ...}}`; null for anything else. */
export function parseCredentials(text: string): StoredCredentials | null {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  const oauth = (json as { claudeAiOauth?: unknown } | null)?.claudeAiOauth as Record<string, unknown> | undefined;
  if (!oauth || typeof oauth.accessToken !== 'string' || !oauth.accessToken.trim()) return null;
  const expiresAt = typeof oauth.expiresAt === 'number' ? oauth.expiresAt : undefined;
  return { accessToken: oauth.accessToken.trim(), expiresAt };
}

// Claude Code names the item after the config folder when CLAUDE_CONFIG_DIR is set (first 8 hex digits of its
// sha256); try that one first, then the default name.
export function keychainServices(env: NodeJS.ProcessEnv): string[] {
  const dir = env.CLAUDE_CONFIG_DIR;
  if (!dir) return [KEYCHAIN_SERVICE];
  const suffix = createHash('sha256').update(dir).digest('hex').slice(0, 8);
  return [`${KEYCHAIN_SERVICE}-${suffix}`, KEYCHAIN_SERVICE];
}

async function readFromKeychain(
  env: NodeJS.ProcessEnv,
  read: (service: string) => Promise<string>,
  tried: string[],
): Promise<string | null> {
  for (const service of keychainServices(env)) {
    tried.push(`macOS Keychain item "${service}"`);
    const text = await read(service).catch(() => null);
    const creds = text === null ? null : parseCredentials(text.trim());
    if (creds) return creds.accessToken;
  }
  return null;
}

function securityFindPassword(service: string): Promise<string> {
  return new Promise((resolve, reject) => {
    // stdout carries the secret: it is returned, never logged; stderr is dropped for the same reason.
    execFile(
      '/usr/bin/security',
      ['find-generic-password', '-s', service, '-w'],
      { timeout: 10_000, encoding: 'utf8' },
      (err, stdout) => {
        if (err) reject(new Error(`security exited with an error for "${service}"`));
        else resolve(stdout);
      },
    );
  });
}
