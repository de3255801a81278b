// DOM and formatting helpers. Every string from the plan, the log or the ledger reaches the page
// through h()/inline(), which create elements and text nodes: nothing is ever parsed as HTML.

/** Create an element; string children become text nodes. Props are set by code, never from data. */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  setProps(el, props);
  appendAll(el, children);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

export function svg(tag, props, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setProps(el, props);
  appendAll(el, children);
  return el;
}

function setProps(el, props) {
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.setAttribute('class', value);
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
}

function appendAll(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

/** `code` and **bold** in log and plan text, as elements; everything else stays plain text. */
export function inline(text) {
  const parts = [];
  const re = /`([^`\n]+)`|\*\*([^*\n]+)\*\*/g;
  let last = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m.index > last) parts.push(text.slice(last, m.index));
    parts.push(m[1] !== undefined ? h('code', null, m[1]) : h('strong', null, m[2]));
    last = re.lastIndex;
  }
  if (last < text.length) parts.push(text.slice(last));
  return parts;
}

/** Plan fields are hand-written JSON: show what is there, whatever its type. */
export function asText(value) {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export function asList(value) {
  if (Array.isArray(value)) return value.map(asText).filter((s) => s !== '');
  return value === undefined || value === null || value === '' ? [] : [asText(value)];
}

export function fmtDuration(ms) {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  const hrs = Math.floor(m / 60);
  if (hrs < 24) return `${hrs}h ${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(hrs / 24)}d ${hrs % 24}h`;
}

export function fmtBytes(n) {
  return n < 1024 * 1024 ? `${Math.max(1, Math.round(n / 1024))} KiB` : `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

export function fmtMs(ms) {
  if (!Number.isFinite(ms)) return '—';
  return ms < 1000 ? `${Math.round(ms)} ms` : ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : fmtDuration(ms);
}

export function fmtAgo(iso, now = Date.now()) {
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return '';
  const ms = now - t;
  if (ms < 5000) return 'just now';
  if (ms < 86_400_000) return `${fmtDuration(ms).split(' ')[0]} ago`;
  return fmtTime(iso);
}

export function fmtTime(iso) {
  const d = new Date(iso);
  if (!Number.isFinite(d.getTime())) return asText(iso);
  const time = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
  if (d.toDateString() === new Date().toDateString()) return time;
  return `${d.toLocaleDateString([], { month: 'short', day: 'numeric' })} ${time}`;
}

// The figure the runner and status print (src/util/usd.ts renderUsd, same rule): cents, and a cost under a dollar
// to a hundredth of a cent, so $0.0025 does not show as $0.00.
export function fmtCost(usd) {
  if (typeof usd !== 'number' || !Number.isFinite(usd)) return null;
  if (usd >= 1 || usd <= 0) return `$${usd.toFixed(2)}`;
  if (usd < 0.00005) return '<$0.0001';
  return `$${usd.toFixed(4).replace(/(\.\d\d\d*?)0+$/, '$1')}`;
}

export function plural(n, word) {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
