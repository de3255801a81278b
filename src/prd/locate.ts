// Turns a character offset into the 1-based line and column an editor shows. Columns count UTF-16 code
// units (as VS Code and tsc do); "\r\n", "\n" and a lone "\r" each end a line.

export interface Position {
  line: number;
  col: number;
}

export type Locate = (offset: number) => Position;

export function makeLocator(text: string): Locate {
  let starts: number[] | undefined;
  return (offset) => {
    starts ??= lineStarts(text);
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, col: offset - starts[lo] + 1 };
  };
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0a || (c === 0x0d && text.charCodeAt(i + 1) !== 0x0a)) starts.push(i + 1);
  }
  return starts;
}
