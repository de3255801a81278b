// The side column: the loops under ralph/.runs and the progress log.
import { h, inline, asText, fmtBytes, fmtCost, fmtDuration, fmtAgo } from './dom.js';
import { renderWorkers } from './workers.js';

/** Loops shown before the rest fold away under "older loops". */
const LOOPS_SHOWN = 3;

/** "Exit code: 1", "Reason: …", "Output (last 40 lines):" */
const LABELLED = /^([A-Z][A-Za-z0-9 ()]{0,28}):(\s.*|)$/;

const FINISHED = {
  0: 'complete',
  1: 'max iterations',
  2: 'refused',
  3: 'stuck',
  4: 'no progress',
  5: 'budget reached',
  6: 'stopped to protect work',
  7: 'done, not merged',
  130: 'interrupted',
};

export function renderLoops(snap) {
  const loops = Array.isArray(snap?.loops) ? [...snap.loops] : [];
  loops.sort((a, b) => Number(b.alive) - Number(a.alive));
  const el = document.getElementById('loops');
  document.getElementById('loops-count').textContent = loops.length
    ? `${loops.filter((l) => l.alive).length} running · ${loops.length} total`
    : '';
  if (!loops.length) {
    el.replaceChildren(
      h(
        'p',
        { class: 'empty-small' },
        'No loop has run yet. Start one with ',
        h('code', null, './ralph/ralph.sh'),
        '.',
      ),
    );
    return;
  }
  const shown = loops.slice(0, LOOPS_SHOWN).map(renderLoop);
  const rest = loops.slice(LOOPS_SHOWN);
  // Updates arrive every iteration; an expanded list must stay expanded.
  const wasOpen = el.querySelector('details.older')?.open === true;
  const older = h(
    'details',
    { class: 'older', open: wasOpen },
    h('summary', null, `${rest.length} older loop${rest.length === 1 ? '' : 's'}`),
    ...rest.map(renderLoop),
  );
  el.replaceChildren(...shown, ...(rest.length ? [older] : []));
  tickLoops();
}

// The engine's statuses (state.json) and the look each gets: a limit that ended a loop is worth a
// look, not an error; `dead` says running but its process is gone (killed with -9, power loss).
const TONES = {
  complete: 'ok',
  // Every story passed, but --deliver pr-merge did not merge (CI failed or never reported, pinned tests changed).
  'not-merged': 'limit',
  'max-iterations': 'limit',
  'max-duration': 'limit',
  'no-progress': 'limit',
  budget: 'limit',
  interrupted: 'stopped',
  cancelled: 'stopped',
  stuck: 'failed',
  // The agent rewrote the plan branch's history or the runner could not return to it: the owner must look.
  protected: 'failed',
  refused: 'failed',
  failed: 'failed',
  dead: 'stale',
  // state.json could not be read: nothing is known about the process, and the message says why.
  unreadable: 'failed',
};

export function loopTone(loop) {
  if (loop.alive) return 'running';
  if (TONES[loop.status]) return TONES[loop.status];
  if (loop.exitCode === null || loop.exitCode === undefined) return 'stale';
  return loop.exitCode === 0 ? 'ok' : 'failed';
}

// A loop inside a Claude Code session (/ralph-loop): Claude Code is its process and reports no cost to ralphkit,
// each iteration is a stop of the session, and when the session is gone the way on is a new /ralph-loop.
const IN_SESSION = {
  agent: 'in-session (Claude Code)',
  gone: 'session gone',
  dead: 'its Claude Code session is gone; start a new loop there with /ralph-loop',
};

function renderLoop(loop) {
  const tone = loopTone(loop);
  const session = loop.inSession === true;
  const label =
    tone === 'stale'
      ? `${asText(loop.status)} · ${session ? IN_SESSION.gone : 'process gone'}`
      : asText(loop.status).replace(/-/g, ' ');
  const message = session && loop.status === 'dead' ? IN_SESSION.dead : loop.message;
  const n = loop.iteration ?? 0;
  const max = loop.maxIterations ?? 0;
  // Exit 1 is also --max-duration's: its status says which limit it was.
  const meaning = loop.status === 'max-duration' ? 'time limit' : FINISHED[loop.exitCode];
  const sameAsStatus = meaning && meaning.replace(/\W/g, '') === asText(loop.status).replace(/\W/g, '');
  const exit =
    loop.exitCode !== null && loop.exitCode !== undefined
      ? `exit ${loop.exitCode}${meaning && !sameAsStatus ? ` · ${meaning}` : ''}`
      : null;
  const end = loop.alive ? null : loop.updatedAt;
  const fill = h('span', { class: 'mini-fill' });
  fill.style.width = `${max ? Math.min(100, (100 * n) / max) : 0}%`;
  return h(
    'article',
    {
      class: `loop tone-${tone}`,
      dataset: { loopId: loop.id, status: asText(loop.status), alive: String(loop.alive) },
    },
    h(
      'div',
      { class: 'loop-top' },
      h('span', { class: 'loop-status' }, h('span', { class: 'dot' }), label),
      h('span', { class: 'loop-agent', title: asText(loop.agent) }, session ? IN_SESSION.agent : asText(loop.agent)),
    ),
    h('div', { class: 'loop-id', title: loop.prd ? `plan: ${asText(loop.prd)}` : null }, asText(loop.id)),
    h(
      'div',
      { class: 'loop-progress' },
      h(
        'span',
        { class: 'loop-iter' },
        session ? 'stop ' : 'iteration ',
        h('strong', null, String(n)),
        max ? ` of ${max}` : loop.maxIterations === 0 ? ' (no cap)' : '',
      ),
      h('span', { class: 'mini-bar' }, fill),
    ),
    h(
      'div',
      { class: 'loop-facts' },
      session
        ? h('span', { class: 'cost', title: 'Claude Code reports no cost to ralphkit inside a session' }, 'cost n/a')
        : fmtCost(loop.costUsd)
          ? h('span', { class: 'cost', title: 'cost reported by the agent' }, fmtCost(loop.costUsd))
          : null,
      h('span', { title: 'elapsed', dataset: { from: asText(loop.startedAt), to: asText(end) }, class: 'elapsed' }, ''),
      exit ? h('span', null, exit) : null,
      loop.updatedAt
        ? h(
            'span',
            { class: 'ago', dataset: { ago: asText(loop.updatedAt) }, title: `last update ${asText(loop.updatedAt)}` },
            '',
          )
        : null,
    ),
    message ? h('div', { class: 'loop-message' }, asText(message)) : null,
    renderWorkers(loop),
  );
}

/** Elapsed times and "updated … ago" move every second without a new event. */
export function tickLoops(now = Date.now()) {
  for (const el of document.querySelectorAll('.loop .elapsed')) {
    const from = Date.parse(el.dataset.from);
    const to = el.dataset.to ? Date.parse(el.dataset.to) : now;
    el.textContent = Number.isFinite(from)
      ? el.dataset.to
        ? `ran ${fmtDuration(to - from)}`
        : `${fmtDuration(to - from)} elapsed`
      : '';
  }
  for (const el of document.querySelectorAll('.loop .ago')) el.textContent = `updated ${fmtAgo(el.dataset.ago, now)}`;
}

export function renderLog(snap, ui) {
  const el = document.getElementById('log');
  const log = snap?.log;
  if (!snap?.exists || !log) {
    el.replaceChildren(
      h(
        'p',
        { class: 'empty-small' },
        `No ${snap?.file ?? 'ralph/progress.txt'} yet: each iteration appends its notes there.`,
      ),
    );
    return;
  }
  const sections = [...log.sections].reverse().map((s) => renderSection(s, ui, 'entry'));
  const patterns = log.patterns ? renderSection(log.patterns, ui, 'patterns') : null;
  const preamble = log.preamble.length ? h('div', { class: 'log-preamble' }, log.preamble.map(renderBlock)) : null;
  // A long log arrives as its head and its newest entries; the older ones are only in the file.
  const omitted =
    snap.omittedBytes > 0
      ? h(
          'p',
          { class: 'log-omitted' },
          `Older entries (${fmtBytes(snap.omittedBytes)}) are not shown here; they are in ${asText(snap.file)}.`,
        )
      : null;
  const scrolled = el.scrollTop;
  el.replaceChildren(patterns ?? '', ...sections, omitted ?? '', preamble ?? '');
  if (!patterns && !sections.length && !preamble)
    el.replaceChildren(h('p', { class: 'empty-small' }, 'The log is empty so far.'));
  el.scrollTop = scrolled; // a re-render must not yank the reader back to the top
}

function renderSection(section, ui, kind) {
  const runner = section.runner ? ` runner${/\brejected\b/.test(section.title) ? ' rejected' : ''}` : '';
  return h(
    'article',
    { class: `log-section ${kind}${runner}` },
    h('h3', null, titleParts(section.title, ui)),
    section.blocks.map(renderBlock),
  );
}

/** "2026-11-29 14:03 - US-002 …": the date goes quiet, a story id becomes a link to its card. */
function titleParts(title, ui) {
  const m = /^(\d{4}-\d\d-\d\d(?:[ T]\d\d:\d\d(?::\d\d(?:\.\d+)?)?)?\s*(?:UTC|Z)?)\s*[-–—:]?\s*(.*)$/.exec(title);
  const date = m ? m[1] : null;
  const rest = m ? m[2] : title;
  const parts = [];
  if (date) parts.push(h('time', null, date));
  let last = 0;
  for (const id of rest.matchAll(/\b[A-Z][A-Z0-9]*-\d+\b/g)) {
    if (id.index > last) parts.push(rest.slice(last, id.index));
    parts.push(
      ui.hasStory(id[0])
        ? h('button', { type: 'button', class: 'story-link', onclick: () => ui.select(id[0]) }, id[0])
        : id[0],
    );
    last = id.index + id[0].length;
  }
  if (last < rest.length) parts.push(rest.slice(last));
  return parts;
}

function renderBlock(block) {
  if (block.kind === 'heading') return h('h4', null, ...inline(block.text));
  if (block.kind === 'code')
    return block.text.trim()
      ? h('pre', null, h('code', null, block.text))
      : h('p', { class: 'no-output' }, '(no output)');
  if (block.kind === 'list')
    return h(
      'ul',
      null,
      block.items.map((i) => h('li', { class: `depth-${i.depth}` }, ...inline(i.text))),
    );
  // Wrapped prose reflows as in markdown; "Label: value" lines (the runner's blocks) keep their own line.
  return h(
    'p',
    null,
    block.text.split('\n').map((line, i) => {
      const m = LABELLED.exec(line);
      const sep = i === 0 ? null : m ? '\n' : ' ';
      return m ? [sep, h('span', { class: 'label' }, `${m[1]}:`), ...inline(m[2])] : [sep, ...inline(line)];
    }),
  );
}
