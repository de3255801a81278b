// Orders ralphkit versions as semver does for release numbers (0.10.0 after 0.9.1, a pre-release before its
// release); two pre-releases of one release are compared as text, which is enough to tell newer from older here.

/** Negative when `a` is older than `b`, positive when newer, 0 when equal or when either cannot be read. */
export function compareVersions(a: string, b: string): number {
  const pa = parseVersion(a);
  const pb = parseVersion(b);
  if (!pa || !pb) return 0;
  for (let i = 0; i < 3; i++) if (pa.release[i] !== pb.release[i]) return pa.release[i] - pb.release[i];
  if (pa.pre === pb.pre) return 0;
  if (pa.pre === '') return 1;
  if (pb.pre === '') return -1;
  return pa.pre < pb.pre ? -1 : 1;
}

function parseVersion(text: string): { release: number[]; pre: string } | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(text.trim());
  if (!match) return undefined;
  return { release: [Number(match[1]), Number(match[2]), Number(match[3])], pre: match[4] ?? '' };
}
