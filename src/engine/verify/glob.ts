// Path globs for `protect` and `mayChange` in prd.json, and the runner's default pinned set. The rules are
// gitignore's, kept small: `*` and `?` stay inside one folder name, `**` crosses folders, `{a,b}` is either;
// a glob without a slash matches a file name in any folder, one with a slash is anchored at the repository root,
// and a glob that names a folder (`test/`, or a folder that exists) covers everything under it.

/** A RegExp for one glob, matched against a repository-relative path with forward slashes. */
export function globToRegExp(glob: string): RegExp {
  let g = glob.trim().replace(/^\.\//, '');
  // As in .gitignore, a slash at the end only says "a folder"; one anywhere else anchors the glob at the root.
  const anchored = g.replace(/\/$/, '').includes('/') && !/^\*\*\/[^/]*$/.test(g);
  if (g.endsWith('/')) g += '**';
  let out = '';
  for (let i = 0; i < g.length; i++) {
    const c = g[i];
    if (c === '*' && g[i + 1] === '*') {
      // "**/" is zero or more folders; a trailing "**" is anything below.
      if (g[i + 2] === '/') {
        out += '(?:.*/)?';
        i += 2;
      } else {
        out += '.*';
        i += 1;
      }
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '{') {
      const close = g.indexOf('}', i);
      if (close < 0) out += '\\{';
      else {
        out += `(?:${g
          .slice(i + 1, close)
          .split(',')
          .map(escapeRegex)
          .join('|')})`;
        i = close;
      }
    } else out += escapeRegex(c);
  }
  // A folder name matches what is under it as well.
  return new RegExp(`^${anchored ? '' : '(?:.*/)?'}${out}(?:/.*)?$`);
}

function escapeRegex(text: string): string {
  return text.replace(/[.+^${}()|[\]\\]/g, '\\$&');
}

// Each glob made into a RegExp once per process: the runner matches the same few (its defaults, the plan's) against
// the files of every claim, one file at a time in places.
const compiled = new Map<string, RegExp>();

/** globToRegExp, once per glob (a RegExp without the g flag keeps no state between tests). */
export function compiledGlob(glob: string): RegExp {
  let re = compiled.get(glob);
  if (!re) compiled.set(glob, (re = globToRegExp(glob)));
  return re;
}

/** The paths of `files` that any of `globs` matches. */
export function matchGlobs(files: readonly string[], globs: readonly string[]): string[] {
  if (!globs.length) return [];
  const res = globs.map(compiledGlob);
  return files.filter((f) => res.some((re) => re.test(f)));
}
