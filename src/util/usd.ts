// A cost in US dollars as the runner, `status` and the dashboard show it (src/view/page/dom.js fmtCost has the same
// rule): cents from a dollar up, and below that to a hundredth of a cent, trailing zeros dropped down to cents, so a
// run that cost $0.0025 is never shown as $0.00 in one place and $0.0025 in another.
export function renderUsd(usd: number): string {
  if (usd >= 1 || usd <= 0) return `$${usd.toFixed(2)}`;
  if (usd < 0.00005) return '<$0.0001';
  return `$${usd.toFixed(4).replace(/(\.\d\d\d*?)0+$/, '$1')}`;
}

/** A loop's cost, with the reviewer's part named when a reviewer reported one: `$1.20 (reviewer $0.40)`. */
export function renderCostSplit(costUsd: number, reviewCostUsd?: number): string {
  return reviewCostUsd === undefined
    ? renderUsd(costUsd)
    : `${renderUsd(costUsd)} (reviewer ${renderUsd(reviewCostUsd)})`;
}
