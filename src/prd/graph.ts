// Dependency cycles among stories. One cycle is named per strongly connected component, so a tangle of
// stories gives one readable message instead of every loop through it. Iterative, so 5,000 chained
// stories cannot overflow the stack.

/**
 * `edges[i]` lists the nodes node i depends on. Returns one cycle per tangle, each as the node list
 * `[a, b, ..., a]` starting at the tangle's lowest node index, in the order the tangles are found.
 */
export function findCycles(edges: number[][]): number[][] {
  return stronglyConnected(edges)
    .filter((scc) => scc.length > 1 || edges[scc[0]].includes(scc[0]))
    .map((scc) => shortestCycle(edges, scc))
    .sort((a, b) => a[0] - b[0]);
}

function stronglyConnected(edges: number[][]): number[][] {
  const n = edges.length;
  const index = new Array<number>(n).fill(-1);
  const low = new Array<number>(n).fill(0);
  const onStack = new Array<boolean>(n).fill(false);
  const stack: number[] = [];
  const out: number[][] = [];
  let counter = 0;
  const enter = (v: number) => {
    index[v] = low[v] = counter++;
    stack.push(v);
    onStack[v] = true;
  };
  for (let root = 0; root < n; root++) {
    if (index[root] !== -1) continue;
    enter(root);
    const work: { v: number; next: number }[] = [{ v: root, next: 0 }];
    while (work.length > 0) {
      const top = work[work.length - 1];
      if (top.next < edges[top.v].length) {
        const w = edges[top.v][top.next++];
        if (index[w] === -1) {
          enter(w);
          work.push({ v: w, next: 0 });
        } else if (onStack[w]) low[top.v] = Math.min(low[top.v], index[w]);
        continue;
      }
      work.pop();
      if (work.length > 0) low[work[work.length - 1].v] = Math.min(low[work[work.length - 1].v], low[top.v]);
      if (low[top.v] === index[top.v]) out.push(popComponent(stack, onStack, top.v));
    }
  }
  return out;
}

function popComponent(stack: number[], onStack: boolean[], v: number): number[] {
  const scc: number[] = [];
  let w: number;
  do {
    w = stack.pop()!;
    onStack[w] = false;
    scc.push(w);
  } while (w !== v);
  return scc;
}

/** Breadth-first from the lowest node back to itself, staying inside the component. */
function shortestCycle(edges: number[][], scc: number[]): number[] {
  let start = scc[0];
  for (const v of scc) if (v < start) start = v; // a loop, not Math.min(...scc): a component may hold 100,000 stories
  const inside = new Set(scc);
  const parent = new Map<number, number>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i];
    for (const w of edges[v]) {
      if (w === start) return [...pathTo(parent, start, v), start];
      if (!inside.has(w) || parent.has(w)) continue;
      parent.set(w, v);
      queue.push(w);
    }
  }
  return [start, start]; // unreachable for a real component; keeps the type total
}

function pathTo(parent: Map<number, number>, start: number, end: number): number[] {
  const path = [end];
  while (path[path.length - 1] !== start) path.push(parent.get(path[path.length - 1])!);
  return path.reverse();
}
