// Branch names as `git check-ref-format --branch` accepts them, in pure code: the runner refuses a bad
// `branchName` before any git command sees it, so a name can never smuggle an option or a shell word.
//
// Rules (git-check-ref-format(1), applied to the name as git does after prefixing refs/heads/):
//   1. not empty; does not start with "-" (git: would read as an option) and is not "HEAD";
//   2. no component (between slashes) starts with "." or ends with ".lock";
//   3. no ".." anywhere; no "@{" anywhere;
//   4. no ASCII control character or DEL, no space, and none of ~ ^ : ? * [ \ anywhere;
//   5. does not start or end with "/", and has no "//" (every component is non-empty);
//   6. does not end with ".".
// Stricter than git in one place: a bare "@" is refused, because git reads "@" as HEAD in most commands.
// Non-ASCII letters are allowed, as git allows them.

const FORBIDDEN_CHAR = /[\x00-\x20\x7f~^:?*[\\]/;

export function branchNameProblem(name: string): string | undefined {
  if (name === '') return 'it is empty';
  if (name.startsWith('-')) return 'it starts with "-"';
  if (name === 'HEAD' || name === '@') return `"${name}" names the current commit, not a branch`;
  const bad = FORBIDDEN_CHAR.exec(name);
  if (bad) return `it contains ${describeChar(bad[0])}`;
  if (name.includes('..')) return 'it contains ".."';
  if (name.includes('@{')) return 'it contains "@{"';
  if (name.startsWith('/') || name.endsWith('/')) return `it ${name.startsWith('/') ? 'starts' : 'ends'} with "/"`;
  if (name.includes('//')) return 'it contains "//"';
  if (name.endsWith('.')) return 'it ends with "."';
  for (const part of name.split('/')) {
    if (part.startsWith('.')) return `the part "${part}" starts with "."`;
    if (part.endsWith('.lock')) return `the part "${part}" ends with ".lock"`;
  }
  return undefined;
}

function describeChar(c: string): string {
  if (c === ' ') return 'a space';
  const code = c.charCodeAt(0);
  if (code < 0x20 || code === 0x7f)
    return `the control character U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  return `"${c}"`;
}
