// git's configuration as the runner guard sees it (runner-guard.ts): the files it names that the guard holds too
// (local includes, the system and global files and what they include, core.hooksPath, core.attributesFile), and, once
// one of them changed, which keys changed and what they can do: kept (git's own upstream records), inert (put back
// without rejecting), or running code.
import path from 'node:path';
import { runGit } from '../git/git.js';
import { readConfigList } from '../git/read.js';

/** The configuration the guard holds files for: the local includes and the user's core.hooksPath (local, global). */
interface GuardConfig {
  includes: string[];
  hooksPaths: string[];
  /**
   * Configuration from outside the repository that the runner's git reads, beyond ~/.gitconfig and the XDG file: the
   * system file, and the files the global and system files include (read or not there yet). Each can set a filter
   * the runner's checkout would run.
   */
  outside: string[];
  /** The file core.attributesFile names, in the global or system configuration (held like .git/info/attributes). */
  attributes: string | null;
}

/** GuardConfig from one `git config --list`; when git cannot list it so (before git 2.26, no --show-scope), each is asked on its own. */
export async function readGuardConfig(repoRoot: string, common: string): Promise<GuardConfig> {
  const list = await readConfigList(repoRoot);
  if (!list)
    return {
      includes: await readIncludedConfigs(repoRoot, common),
      hooksPaths: await readHooksPath(repoRoot),
      outside: [systemConfig()],
      attributes: null,
    };
  const isInclude = (e: (typeof list)[number]) => /^include(if\..*)?\.path$/.test(e.key) && e.value !== null;
  const includes = list.filter((e) => e.scope === 'local' && isInclude(e)).map((e) => resolveInclude(common, e.value!));
  const beyond = list.filter((e) => e.scope === 'system' || e.scope === 'global');
  const attributes = beyond.filter((e) => e.key === 'core.attributesfile' && e.value).pop()?.value;
  const outside = [
    // The system file, or where git looks for one when there is none yet.
    ...(beyond.some((e) => e.scope === 'system') ? [] : [systemConfig()]),
    ...beyond.flatMap((e) => (e.file ? [path.resolve(repoRoot, e.file)] : [])),
    ...beyond
      .filter(isInclude)
      .map((e) => resolveInclude(e.file ? path.dirname(path.resolve(repoRoot, e.file)) : common, e.value!)),
  ];
  // As `git config --<scope> --get`: the last value of the key in that scope.
  const hooksPath = (scope: string) =>
    list
      .filter((e) => e.scope === scope && e.key === 'core.hookspath')
      .map((e) => e.value ?? '')
      .pop() ?? '';
  return {
    includes,
    outside: [...new Set(outside)],
    attributes: attributes ? resolveInclude(repoRoot, attributes) : null,
    hooksPaths: ['local', 'global']
      .map(hooksPath)
      .map((v) => v.trim())
      .filter(Boolean)
      .map((v) => resolveHooksPath(repoRoot, v)),
  };
}

/** Files the repository's configuration includes (include.path, includeIf.*.path), resolved as git does. */
async function readIncludedConfigs(repoRoot: string, common: string): Promise<string[]> {
  const r = await runGit(repoRoot, ['config', '--local', '--get-regexp', '-z', '^include(if\\..*)?\\.path$']);
  if (r.code !== 0) return [];
  return r.stdout
    .split('\0')
    .filter(Boolean)
    .map((entry) => resolveInclude(common, entry.slice(entry.indexOf('\n') + 1)));
}

// Where git looks for its system configuration when GIT_CONFIG_SYSTEM does not say (a build's $(sysconfdir); /etc
// for the distributions' packages). One found in another place is held where git read it.
const systemConfig = () => process.env.GIT_CONFIG_SYSTEM || '/etc/gitconfig';

function resolveInclude(common: string, value: string): string {
  const expanded = value.startsWith('~/') ? path.join(process.env.HOME ?? '', value.slice(2)) : value;
  return path.resolve(common, expanded);
}

/**
 * A core.hooksPath the user set before the loop (their hooks for their own commits): held too. Read per file scope,
 * since the runner's own `-c core.hooksPath` override would answer a plain `git config --get`.
 */
async function readHooksPath(repoRoot: string): Promise<string[]> {
  const out: string[] = [];
  for (const scope of ['--local', '--global']) {
    const r = await runGit(repoRoot, ['config', scope, '--get', 'core.hooksPath']);
    const value = r.code === 0 ? r.stdout.trim() : '';
    if (value) out.push(resolveHooksPath(repoRoot, value));
  }
  return out;
}

function resolveHooksPath(repoRoot: string, value: string): string {
  return path.resolve(repoRoot, value.startsWith('~/') ? path.join(process.env.HOME ?? '', value.slice(2)) : value);
}

/** The keys (section.subsection.key, as git names them) whose values differ between two config files. */
export function planConfigChange(before: Buffer | null, after: Buffer | null): string[] {
  const a = readConfigEntries(before?.toString('utf8') ?? '');
  const b = readConfigEntries(after?.toString('utf8') ?? '');
  const keys = new Set([...a.keys(), ...b.keys()]);
  return [...keys].filter((k) => (a.get(k) ?? []).join('\0') !== (b.get(k) ?? []).join('\0')).sort();
}

/** A small reader of git's config format: every value per key, in order (enough to tell which keys changed). */
export function readConfigEntries(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let section = '';
  for (const raw of text.replace(/\\\r?\n/g, '').split(/\r?\n/)) {
    const line = raw.replace(/^\s+/, '');
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const head = /^\[\s*([^\]\s"]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)$/.exec(line);
    if (head) {
      const [name, sub] = [head[1].toLowerCase(), head[2]];
      // [section.sub] is the old spelling of [section "sub"], lowercased.
      section = sub !== undefined ? `${name}.${sub}` : name;
      const rest = head[3].trim();
      if (!rest || rest.startsWith('#') || rest.startsWith(';')) continue;
      addEntry(out, section, rest);
      continue;
    }
    addEntry(out, section, line);
  }
  return out;
}

function addEntry(out: Map<string, string[]>, section: string, line: string): void {
  const m = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line.trim());
  if (!m) return;
  const key = `${section}.${m[1].toLowerCase()}`;
  out.set(key, [...(out.get(key) ?? []), (m[2] ?? 'true').trim()]);
}

// Written by git for ordinary work (`git push -u`, `git branch --set-upstream-to`): kept as the agent left them.
export function isKeptKey(key: string): boolean {
  return /^branch\.[^]*\.(remote|merge|pushremote|rebase|description)$/.test(key);
}

// Read by nothing the runner does: its git calls have hooks off, and checks run in clones with a config of their own.
// Put back (they would run in the user's own commits later), without rejecting the work.
export function isInertKey(key: string): boolean {
  return key === 'core.hookspath' || /^(advice|color|gui|i18n|column)\./.test(key);
}

/**
 * Settings that make git run a program or change what the runner's own git calls do (a filter, a diff or merge
 * driver, an include, core.*, a URL rewrite, a remote, credentials, signing), and anything git cannot parse.
 */
export function runsCode(key: string): boolean {
  if (key === '?') return true;
  if (key === 'core.hookspath') return false;
  return /^(core|filter|diff|merge|include|includeif|gpg|credential|url|protocol|remote|http|submodule|uploadpack|receive|transfer|fetch|push)\./.test(
    key,
  );
}
