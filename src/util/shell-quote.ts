// A value put into a command a hint tells the user to paste: a branch name, a path, a loop id. Such values come from
// the plan (the agent can write it) and the file system, so each goes through shellQuote: as it is when every
// character is one no POSIX shell reads specially (so ordinary names stay readable), else in single quotes, where
// nothing is special, with each ' written '\''. Built-ins only: the loop engine bundles this file.

/** Characters that mean nothing to sh, bash or zsh anywhere in a word (no globbing, expansion, history or comment; not "=", which zsh expands at the start of a word). */
const PLAIN = /^[A-Za-z0-9_@%+:,./-]+$/;

/** `value` as one word of a POSIX shell command line. */
export function shellQuote(value: string): string {
  if (PLAIN.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** True when `value` would not be one plain word in a shell: a command typed with it unquoted could run something. */
export function needsShellQuoting(value: string): boolean {
  return !PLAIN.test(value);
}
