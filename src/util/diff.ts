// A small unified diff (Myers' algorithm) so --diff needs no dependency.

type Op = { kind: ' ' | '-' | '+'; line: string };

/** Past this many differing lines, the diff shows the whole old file removed and the new one added. */
const MAX_EDIT_DISTANCE = 2000;
const CONTEXT = 3;

export function renderUnifiedDiff(oldText: string, newText: string, oldName: string, newName: string): string {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  const ops = diffLines(a, b);
  if (ops.every((op) => op.kind === ' ')) return '';
  return [`--- ${oldName}`, `+++ ${newName}`, ...renderHunks(ops)].join('\n') + '\n';
}

// A last line without its newline differs from the same line with one (as in diff -u). No line can hold a
// newline after the split, so a trailing '\n' marks it; rendering turns it into git's "\ No newline" note.
const NO_EOL = '\n';

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  if (lines.at(-1) === '') lines.pop();
  else lines[lines.length - 1] += NO_EOL;
  return lines;
}

function renderOp(op: Op): string {
  return op.line.endsWith(NO_EOL)
    ? `${op.kind}${op.line.slice(0, -1)}\n\\ No newline at end of file`
    : `${op.kind}${op.line}`;
}

export function diffLines(a: readonly string[], b: readonly string[]): Op[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const keep = (lines: readonly string[]) => lines.map((line): Op => ({ kind: ' ', line }));
  const middle = myers(a.slice(start, endA), b.slice(start, endB));
  return [...keep(a.slice(0, start)), ...middle, ...keep(a.slice(endA))];
}

function myers(a: readonly string[], b: readonly string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const offset = n + m + 1;
  const v = new Int32Array(2 * offset + 1);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= Math.min(n + m, MAX_EDIT_DISTANCE); d++) {
    trace.push(v.slice(offset - d - 1, offset + d + 2));
    for (let k = -d; k <= d; k += 2) {
      const down = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]);
      let x = down ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(trace, a, b);
    }
  }
  return [...a.map((line): Op => ({ kind: '-', line })), ...b.map((line): Op => ({ kind: '+', line }))];
}

// trace[d] holds v[-d-1 .. d+1] as it was before step d; walk back from the end to the start.
function backtrack(trace: Int32Array[], a: readonly string[], b: readonly string[]): Op[] {
  const ops: Op[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = trace.length - 1; d > 0; d--) {
    const v = (k: number) => trace[d][k + d + 1];
    const k = x - y;
    const down = k === -d || (k !== d && v(k - 1) < v(k + 1));
    const prevX = v(down ? k + 1 : k - 1);
    const prevY = prevX - (down ? k + 1 : k - 1);
    while (x > prevX && y > prevY) ops.push({ kind: ' ', line: a[--x] }), y--;
    if (down) ops.push({ kind: '+', line: b[--y] });
    else ops.push({ kind: '-', line: a[--x] });
  }
  while (x > 0 && y > 0) ops.push({ kind: ' ', line: a[--x] }), y--;
  return ops.reverse();
}

function renderHunks(ops: readonly Op[]): string[] {
  const out: string[] = [];
  const changed = ops.map((op, i) => (op.kind === ' ' ? -1 : i)).filter((i) => i >= 0);
  let i = 0;
  while (i < changed.length) {
    let last = i;
    while (last + 1 < changed.length && changed[last + 1] - changed[last] <= 2 * CONTEXT) last++;
    const from = Math.max(0, changed[i] - CONTEXT);
    const to = Math.min(ops.length, changed[last] + CONTEXT + 1);
    out.push(...renderHunk(ops, from, to));
    i = last + 1;
  }
  return out;
}

function renderHunk(ops: readonly Op[], from: number, to: number): string[] {
  let oldLine = 1;
  let newLine = 1;
  for (let i = 0; i < from; i++) {
    if (ops[i].kind !== '+') oldLine++;
    if (ops[i].kind !== '-') newLine++;
  }
  const slice = ops.slice(from, to);
  const oldCount = slice.filter((op) => op.kind !== '+').length;
  const newCount = slice.filter((op) => op.kind !== '-').length;
  // Like diff -u: a count of 1 is left out, and an empty range names the line before it.
  const range = (line: number, count: number) =>
    count === 1 ? `${line}` : `${count === 0 ? line - 1 : line},${count}`;
  return [`@@ -${range(oldLine, oldCount)} +${range(newLine, newCount)} @@`, ...slice.map(renderOp)];
}
