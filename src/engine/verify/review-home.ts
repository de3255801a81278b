// What the reviewer's CLI reads besides the review request (issue #26, class 7). The agent can write the claimed
// commit's instruction files and, without --sandbox, the user's HOME: both reach a reviewer that starts in a clone of
// the commit with the user's configuration (Claude Code's CLAUDE.md files and settings hooks, Codex's AGENTS.md and
// skills, Gemini CLI's GEMINI.md and settings, opencode's and Amp's global rules, agents and plugins, a model provider
// of its own that answers SHIP). So the clone loses every agent instruction and configuration file, and a reviewer run
// by --review-agent gets a configuration folder the runner makes for each review, holding only what its CLI needs to
// log in (docs/agents.md says what was checked against each CLI).
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AgentName } from '../loop-options.js';
import type { ReviewerLogin } from './types.js';
import { findUpward, readBytesOrNull, readTextOrNull } from '../../util/read.js';
import { shellQuote } from '../../util/shell-quote.js';

/**
 * Files and folders an agent CLI reads as instructions or configuration when it starts in, or reads files under, a
 * folder: memory files (CLAUDE.md, AGENTS.md, GEMINI.md and their local and override forms), settings with hooks and
 * MCP servers, commands, sub-agents, skills. Matched by name, in any folder of the clone, in any letter case.
 */
const INSTRUCTION_NAMES = new Set([
  'claude.md',
  'claude.local.md',
  'agents.md',
  'agents.override.md',
  // Amp reads AGENT.md too (its older name for the file).
  'agent.md',
  'gemini.md',
  'opencode.json',
  'opencode.jsonc',
  '.claude',
  '.codex',
  '.agents',
  '.gemini',
  '.opencode',
  '.amp',
  '.mcp.json',
]);

/** The paths of `files` (the claimed commit's, relative to the clone) to remove: the shallowest of each match. */
export function planInstructionPaths(files: readonly string[]): string[] {
  const found = new Set<string>();
  for (const file of files) {
    const parts = file.split('/');
    const at = parts.findIndex((p) => INSTRUCTION_NAMES.has(p.toLowerCase()));
    if (at >= 0) found.add(parts.slice(0, at + 1).join('/'));
  }
  return [...found].sort();
}

/** Removes `paths` from the clone (a symbolic link goes itself: what it points to is not the clone's to delete). */
export function removeInstructionFiles(dir: string, paths: readonly string[]): void {
  for (const p of paths) rmSync(path.join(dir, p), { recursive: true, force: true });
}

export function captureReviewerLogin(agent: AgentName | undefined, env: NodeJS.ProcessEnv): ReviewerLogin | undefined {
  const home = env.HOME || os.homedir();
  if (agent === 'claude') {
    // Claude Code keeps its login in <dir>/.credentials.json (the macOS Keychain on a Mac), <dir> being
    // CLAUDE_SECURESTORAGE_CONFIG_DIR when set (empty: ~/.claude and the default Keychain entry), else
    // CLAUDE_CONFIG_DIR, else ~/.claude. The reviewer keeps reading and refreshing that login where it is: a copy
    // refreshed elsewhere would spend the refresh token the user's own sessions hold.
    const credentialsDir = env.CLAUDE_SECURESTORAGE_CONFIG_DIR ?? (env.CLAUDE_CONFIG_DIR || '');
    return { agent, credentialsDir };
  }
  if (agent === 'codex') {
    const codexHome = env.CODEX_HOME || path.join(home, '.codex');
    // config.toml names the model provider (a base URL, the variable holding its key): the user's as it was before
    // the agent ran, since one the agent wrote could send the review to a server of its own.
    return { agent, codexHome, config: readBytesOrNull(path.join(codexHome, 'config.toml')) };
  }
  if (agent === 'gemini') {
    // Gemini CLI puts GEMINI_CLI_HOME where it would put HOME: ~/.gemini holds the login and everything else.
    const geminiDir = path.join(env.GEMINI_CLI_HOME || home, '.gemini');
    return { agent, geminiDir, auth: readGeminiAuth(path.join(geminiDir, 'settings.json')) };
  }
  if (agent === 'opencode') {
    const dataDir = path.join(xdgDir(env.XDG_DATA_HOME, home, '.local/share'), 'opencode');
    return { agent, dataDir, config: readOpencodeProviders(env, home), wellKnown: readWellKnown(dataDir) ?? [] };
  }
  if (agent === 'amp') {
    return {
      agent,
      dataDir: path.join(xdgDir(env.XDG_DATA_HOME, home, '.local/share'), 'amp'),
      url: readAmpUrl(env, home),
    };
  }
  return undefined;
}

export interface ReviewerHome {
  /** The folder made for this review (mode 0700), removed by `remove`. */
  dir: string;
  /** Variables for the reviewer's environment. */
  env: Record<string, string>;
  remove(): void;
}

/** A configuration folder for one review, and the environment that points the reviewer's CLI at it. */
export function prepareReviewerHome(login: ReviewerLogin): ReviewerHome {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ralph-reviewer-home-'));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    return { dir, env: fillReviewerHome(dir, login), remove };
  } catch (err) {
    remove();
    throw err;
  }
}

function fillReviewerHome(dir: string, login: ReviewerLogin): Record<string, string> {
  // A TMPDIR of its own for every reviewer: under --sandbox a TMPDIR other than /tmp is read-only, and Claude Code and
  // opencode write there at start.
  const tmp = path.join(dir, 'tmp');
  mkdirSync(tmp);
  if (login.agent === 'claude')
    return {
      TMPDIR: tmp,
      CLAUDE_CONFIG_DIR: dir,
      CLAUDE_SECURESTORAGE_CONFIG_DIR: login.credentialsDir,
      // Safe mode: no CLAUDE.md (those of the folders above the clone too: a /tmp/CLAUDE.md), no hooks but managed
      // ones, no skills, plugins, MCP servers, commands or sub-agents. The second for CLIs without safe mode.
      CLAUDE_CODE_SAFE_MODE: '1',
      CLAUDE_CODE_DISABLE_CLAUDE_MDS: '1',
    };
  const home = path.join(dir, 'home');
  mkdirSync(home);
  if (login.agent === 'codex') {
    const codexHome = path.join(dir, 'codex');
    mkdirSync(codexHome);
    if (login.config) writeFileSync(path.join(codexHome, 'config.toml'), login.config, { mode: 0o600 });
    // Codex writes a refreshed login over auth.json in place: through the link, into the user's own file.
    symlinkSync(path.join(login.codexHome, 'auth.json'), path.join(codexHome, 'auth.json'));
    // HOME too: Codex reads skills from ~/.agents/skills.
    return { CODEX_HOME: codexHome, HOME: home, TMPDIR: tmp };
  }
  // The XDG folders too: opencode and Amp find their configuration, data and cache through them, and each CLI reads
  // skills and rules of other agents' folders under HOME (~/.claude, ~/.agents, ~/.config/agents).
  const xdg = {
    config: path.join(dir, 'config'),
    data: path.join(dir, 'data'),
    cache: path.join(dir, 'cache'),
  };
  for (const d of Object.values(xdg)) mkdirSync(d);
  const base = {
    HOME: home,
    XDG_CONFIG_HOME: xdg.config,
    XDG_DATA_HOME: xdg.data,
    XDG_CACHE_HOME: xdg.cache,
    TMPDIR: tmp,
  };
  if (login.agent === 'gemini') {
    const geminiDir = path.join(home, '.gemini');
    mkdirSync(geminiDir);
    // The Google login (oauth_creds.json; gemini-credentials.json when it is kept in an encrypted file instead of the
    // keychain) and the account it belongs to: Gemini CLI rewrites them in place when a token is refreshed.
    for (const name of ['oauth_creds.json', 'gemini-credentials.json', 'google_accounts.json'])
      symlinkSync(path.join(login.geminiDir, name), path.join(geminiDir, name));
    // Which login to use is a setting (security.auth.selectedType): only that part, as it was at loop start. And no
    // .env of the clone or of a folder above it: Gemini CLI 0.61.0 sets any variable one holds that the environment
    // lacks (GEMINI_SYSTEM_MD, GOOGLE_GEMINI_BASE_URL), and a committed one took the review over (an adversarial
    // pass, under --sandbox too). advanced.ignoreLocalEnv leaves it only HOME's .env, which is this folder's.
    const settings = { advanced: { ignoreLocalEnv: true }, ...(login.auth ? { security: { auth: login.auth } } : {}) };
    writeFileSync(path.join(geminiDir, 'settings.json'), `${JSON.stringify(settings)}\n`, { mode: 0o600 });
    return { ...base, GEMINI_CLI_HOME: home };
  }
  if (login.agent === 'opencode') {
    const dataDir = path.join(xdg.data, 'opencode');
    const configDir = path.join(xdg.config, 'opencode');
    mkdirSync(dataDir);
    mkdirSync(configDir);
    // opencode writes auth.json in place (a refreshed OAuth token too): through the link, into the user's file.
    symlinkSync(path.join(login.dataDir, 'auth.json'), path.join(dataDir, 'auth.json'));
    const configFile = path.join(configDir, 'opencode.json');
    writeFileSync(configFile, `${JSON.stringify(login.config ?? {})}\n`, { mode: 0o600 });
    return {
      ...base,
      // Both point at the runner's folder, whatever the user's environment names: their files are the agent's to write.
      OPENCODE_CONFIG_DIR: configDir,
      OPENCODE_CONFIG: configFile,
      // No opencode.json or .opencode/ of the clone's folders (agents, commands, plugins), no ~/.claude/CLAUDE.md or
      // Claude Code skills, no skills of other agents' folders.
      OPENCODE_DISABLE_PROJECT_CONFIG: '1',
      OPENCODE_DISABLE_CLAUDE_CODE: '1',
      OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
    };
  }
  const dataDir = path.join(xdg.data, 'amp');
  const settingsFile = path.join(xdg.config, 'amp', 'settings.json');
  mkdirSync(dataDir);
  mkdirSync(path.dirname(settingsFile));
  // secrets.json holds the API key Amp stored at `amp login`.
  symlinkSync(path.join(login.dataDir, 'secrets.json'), path.join(dataDir, 'secrets.json'));
  // The server the key belongs to (amp.url) is the only setting kept; AMP_URL in the environment still wins over it.
  writeFileSync(settingsFile, `${JSON.stringify(login.url ? { 'amp.url': login.url } : {})}\n`, { mode: 0o600 });
  return { ...base, AMP_SETTINGS_FILE: settingsFile };
}

/**
 * Why the reviewer cannot run with its login as things are now, or null (the review is then refused, `invalid`).
 * opencode 1.18.33 merges the configuration a "wellknown" entry of auth.json names (`<url>/.well-known/opencode`:
 * instructions, agents, MCP commands; a `file://` folder will do), and the reviewer's auth.json is a link to the
 * user's: an entry an agent without --sandbox added there would instruct every later review, and the user's own
 * sessions. One not there at loop start refuses the review. Gemini CLI and Amp: a `.gemini/.env` or a skills folder
 * above the clone (`tmp`, the folder clones are made in, and up).
 */
export function reviewerLoginProblem(login: ReviewerLogin, tmp: string = os.tmpdir()): string | null {
  if (login.agent === 'gemini')
    return findAbove(
      tmp,
      ['.gemini/.env'],
      'Gemini CLI would load its variables (the server it sends the review to, its system prompt)',
    );
  if (login.agent === 'amp')
    return findAbove(tmp, ['.agents/skills', '.claude/skills'], 'Amp would read the skills in it');
  if (login.agent !== 'opencode') return null;
  const file = path.join(login.dataDir, 'auth.json');
  const now = readWellKnown(login.dataDir);
  // One this runner cannot read may hold an entry opencode can (it read one behind a byte order mark): not used.
  if (now === null)
    return `opencode's ${file} cannot be read as JSON, so the runner cannot tell whether it loads configuration from elsewhere: fix or remove it, then resume`;
  const added = now.filter((e) => !login.wellKnown.includes(e));
  if (!added.length) return null;
  const names = added.map((e) => (JSON.parse(e) as [string])[0]).join(', ');
  return `opencode's ${file} gained an entry that loads configuration from elsewhere since the loop started (${names}): the reviewer would take instructions from it; remove it from that file if you did not add it, then resume`;
}

/**
 * The entries of opencode's auth.json in `dataDir` whose type is "wellknown", each as JSON text of [key, entry]; [] when
 * there is no file, null when there is one that is not a JSON object (a byte order mark before it is allowed).
 */
function readWellKnown(dataDir: string): string[] | null {
  const text = readTextOrNull(path.join(dataDir, 'auth.json'));
  if (text === null || !text.trim()) return [];
  let auth: unknown;
  try {
    auth = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    return null;
  }
  if (!isObject(auth)) return null;
  return Object.entries(auth)
    .filter(([, entry]) => isObject(entry) && entry.type === 'wellknown')
    .map((pair) => JSON.stringify(pair));
}

/**
 * The first of `names` in the temp folder the reviewer's clone is made in or a folder above it, as the reason to refuse
 * the review. Gemini CLI 0.61.0 loads a `.gemini/.env` there in a trusted folder (and `--skip-trust` makes the clone
 * one) whatever `advanced.ignoreLocalEnv` says; Amp looked for skills folders above its clone. An agent without
 * --sandbox can write either (a second adversarial pass sent a Gemini review to its own server so).
 */
function findAbove(from: string, names: readonly string[], what: string): string | null {
  const found = findUpward(from, names);
  return found
    ? `${found} lies above the reviewer's clone, and ${what}; remove it (rm -r ${shellQuote(found)}) and the claim is reviewed again`
    : null;
}

/** $XDG_<...>_HOME, or its default under HOME (an empty value counts as unset, as the CLIs read it). */
function xdgDir(value: string | undefined, home: string, fallback: string): string {
  return value || path.join(home, fallback);
}

/** Gemini CLI's `security.auth` setting (which login: Google, API key, Vertex AI, ...), or null. */
function readGeminiAuth(file: string): Record<string, unknown> | null {
  const security = objectAt(readJsonc(file), 'security');
  const auth = objectAt(security, 'auth');
  return auth && Object.keys(auth).length ? auth : null;
}

/**
 * The model-provider part of the user's opencode configuration (`provider` with its base URLs, `model`,
 * `small_model`, `enabled_providers`, `disabled_providers`), or null when there is none: from the global files
 * (config.json, opencode.json, opencode.jsonc in $OPENCODE_CONFIG_DIR or ~/.config/opencode), then $OPENCODE_CONFIG,
 * later ones winning as in opencode. Instructions, agents, commands, plugins and MCP servers are left behind.
 */
function readOpencodeProviders(env: NodeJS.ProcessEnv, home: string): Record<string, unknown> | null {
  const dir = env.OPENCODE_CONFIG_DIR || path.join(xdgDir(env.XDG_CONFIG_HOME, home, '.config'), 'opencode');
  const files = ['config.json', 'opencode.json', 'opencode.jsonc'].map((f) => path.join(dir, f));
  if (env.OPENCODE_CONFIG) files.push(env.OPENCODE_CONFIG);
  const kept: Record<string, unknown> = {};
  for (const file of files) {
    const config = readJsonc(file);
    if (!isObject(config)) continue;
    for (const key of ['provider', 'model', 'small_model', 'enabled_providers', 'disabled_providers'])
      if (key in config) kept[key] = config[key];
  }
  return Object.keys(kept).length ? kept : null;
}

/** The `amp.url` setting of the user's Amp settings file ($AMP_SETTINGS_FILE, else ~/.config/amp/settings.json(c)). */
function readAmpUrl(env: NodeJS.ProcessEnv, home: string): string | null {
  const dir = path.join(xdgDir(env.XDG_CONFIG_HOME, home, '.config'), 'amp');
  const files = env.AMP_SETTINGS_FILE
    ? [env.AMP_SETTINGS_FILE]
    : [path.join(dir, 'settings.json'), path.join(dir, 'settings.jsonc')];
  for (const file of files) {
    const settings = readJsonc(file);
    if (isObject(settings)) {
      const url = settings['amp.url'];
      return typeof url === 'string' && url ? url : null;
    }
  }
  return null;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function objectAt(v: unknown, key: string): Record<string, unknown> | null {
  return isObject(v) && isObject(v[key]) ? v[key] : null;
}

/**
 * A JSON file that may hold comments and trailing commas (the three CLIs accept both), parsed; null when it is
 * missing or not valid even so: the reviewer then runs without the setting, and says why if it cannot log in.
 */
export function readJsonc(file: string): unknown {
  const text = readTextOrNull(file);
  if (text === null) return null;
  try {
    return JSON.parse(stripJsonComments(text.replace(/^\uFEFF/, '')));
  } catch {
    return null;
  }
}

/** `text` without // and /* *\/ comments and commas before a closing bracket, strings left as they are. */
export function stripJsonComments(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      // A string, escapes included, copied whole.
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 1;
      out += ' ';
    } else if (c !== ',' || !closesNext(text, i + 1)) out += c;
  }
  return out;
}

/** Whether only white space stands between `from` and a closing bracket: the comma before `from` is a trailing one. */
function closesNext(text: string, from: number): boolean {
  const closing = /\s*[\]}]/y;
  closing.lastIndex = from;
  return closing.test(text);
}
