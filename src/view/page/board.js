// The header (project, branch, passed/total) and the story board: one column per dependency depth,
// SVG edges from each story to the stories that depend on it; when the columns do not fit the
// window, the depths stack as bands and each card names its dependencies instead.
import { h, svg, asText, asList, plural } from './dom.js';

export const STATE_LABEL = {
  open: 'open',
  passed: 'passed',
  verified: 'verified',
  rejected: 'rejected',
  skipped: 'skipped',
};
const STATE_ICON = { open: '○', passed: '✓', verified: '✔', rejected: '✕', skipped: '–' };

export function renderHeader(snap) {
  const prd = snap.prd ?? {};
  const sum0 = snap.summary ?? { total: 0, passed: 0, verified: 0, reported: 0, rejected: 0, open: 0, skipped: 0 };
  const reported = sum0.reported ?? 0;
  // Stories set aside are not part of what is to be done: the count and the bar leave them out.
  const skipped = sum0.skipped ?? 0;
  const sum = { ...sum0, total: sum0.total - skipped };
  const project = asText(prd.project) || 'Untitled plan';
  document.getElementById('project').textContent = project;
  const branch = document.getElementById('branch');
  branch.textContent = asText(prd.branchName);
  branch.hidden = !prd.branchName;
  document.getElementById('plan-description').textContent = asText(prd.description);
  document.getElementById('passed-count').textContent = String(sum.passed);
  document.getElementById('total-count').textContent = String(sum.total);
  const parts = [
    sum.verified && `${sum.verified} verified`,
    reported && `${reported} reported`,
    sum.passed - sum.verified - reported && `${sum.passed - sum.verified - reported} unverified`,
    sum.rejected && `${sum.rejected} rejected`,
    sum.open && `${sum.open} open`,
    skipped && `${skipped} skipped`,
  ].filter(Boolean);
  document.getElementById('breakdown').textContent = parts.join(' · ');
  const bar = document.getElementById('overall-bar');
  const pct = (n) => (sum.total ? `${(100 * n) / sum.total}%` : '0%');
  bar.querySelector('.bar-verified').style.width = pct(sum.verified);
  bar.querySelector('.bar-passed').style.width = pct(sum.passed - sum.verified);
  bar.querySelector('.bar-rejected').style.width = pct(sum.rejected);
  bar.setAttribute('aria-valuemax', String(sum.total));
  bar.setAttribute('aria-valuenow', String(sum.passed));
  document.title = `${sum.passed}/${sum.total} · ${project} — ralphkit view`;
}

/** Stories and their cards joined by id, with who depends on whom. */
export function joinStories(snap) {
  const stories = Array.isArray(snap.prd?.userStories) ? snap.prd.userStories : [];
  const cards = new Map((snap.cards ?? []).map((c) => [c.id, c]));
  const items = stories.map((story) => ({ story, card: cards.get(story.id) ?? fallbackCard(story) }));
  const dependents = new Map(items.map((i) => [i.story.id, []]));
  for (const { story } of items) for (const dep of asList(story.dependsOn)) dependents.get(dep)?.push(story.id);
  return { items, byId: new Map(items.map((i) => [i.story.id, i])), dependents };
}

function fallbackCard(story) {
  const skipped = story.skip === true || story.passes === 'cancelled' || story.passes === 'skipped';
  return {
    id: story.id,
    state: skipped ? 'skipped' : story.passes === true ? 'passed' : 'open',
    column: 0,
    row: 0,
    next: false,
    missingDeps: [],
    ledger: [],
  };
}

export function renderBoard(joined, ui) {
  const columnsEl = document.getElementById('columns');
  const empty = document.getElementById('board-empty');
  const columns = [];
  for (const item of joined.items) (columns[item.card.column] ??= []).push(item);
  const related = relatedIds(joined, ui.selected);
  // Heads share the first grid row; each column's cards sit centred in the second, so a story's
  // dependents fan out around it like a graph instead of hanging from the top.
  const cells = Array.from(columns, (items = [], c) => {
    const head = h(
      'div',
      { class: 'column-head' },
      c === 0 ? 'No dependencies' : `Stage ${c + 1}`,
      h('span', { class: 'column-count' }, String(items.length)),
    );
    const body = h(
      'div',
      { class: 'column' },
      ...items.sort((a, b) => a.card.row - b.card.row).map((item) => renderCard(item, joined, ui, related)),
    );
    head.style.gridColumn = body.style.gridColumn = String(c + 1);
    return [head, body];
  });
  columnsEl.replaceChildren(...cells.flat());
  empty.hidden = joined.items.length > 0;
  ui.previousStates = new Map(joined.items.map((i) => [i.story.id, i.card.state]));
  fitBoard(joined);
}

/** Room kept for a vertical scrollbar, so showing one never flips the layout (and back). */
const SCROLLBAR_ROOM = 16;

/**
 * Graph when every depth fits side by side at the narrowest column the stylesheet allows, else
 * bands. Depends on the board's width only, never on its height, so it cannot oscillate.
 */
export function fitBoard(joined) {
  const board = document.getElementById('board');
  const depths = joined.items.reduce((n, i) => Math.max(n, (Number(i.card.column) || 0) + 1), 0);
  const css = getComputedStyle(board);
  const px = (name) => parseFloat(css.getPropertyValue(name)) || 0;
  const room = board.offsetWidth - px('padding-left') - px('padding-right') - SCROLLBAR_ROOM;
  const layout = depths * px('--col-min') + Math.max(0, depths - 1) * px('--col-gap') <= room ? 'graph' : 'bands';
  if (board.dataset.layout !== layout) board.dataset.layout = layout;
}

function relatedIds(joined, selected) {
  if (!selected || !joined.byId.has(selected)) return null;
  const deps = asList(joined.byId.get(selected).story.dependsOn);
  return new Set([selected, ...deps, ...(joined.dependents.get(selected) ?? [])]);
}

function renderCard({ story, card }, joined, ui, related) {
  const changed = ui.previousStates?.has(story.id) && ui.previousStates.get(story.id) !== card.state;
  const classes = ['card', `state-${card.state}`];
  if (card.next) classes.push('next');
  if (ui.selected === story.id) classes.push('selected');
  if (related && !related.has(story.id)) classes.push('dimmed');
  if (changed) classes.push('changed');
  const criteria = asList(story.acceptanceCriteria).length;
  const checks = asList(story.checks).length;
  return h(
    'button',
    {
      class: classes.join(' '),
      type: 'button',
      dataset: { storyId: story.id, state: card.state, verification: card.verification ?? '' },
      title: asText(story.description) || null,
      'aria-pressed': ui.selected === story.id ? 'true' : 'false',
      onclick: () => ui.select(story.id),
    },
    h(
      'span',
      { class: 'card-top' },
      h('span', { class: 'card-id' }, story.id),
      card.next
        ? h(
            'span',
            {
              class: 'next-tag',
              title: 'The highest-priority open story whose dependencies pass: the loop should pick it next',
            },
            'next up',
          )
        : null,
      h('span', { class: 'prio', title: `priority ${asText(story.priority)}` }, `P${asText(story.priority)}`),
    ),
    h('span', { class: 'card-title' }, asText(story.title) || '(untitled)'),
    h(
      'span',
      { class: 'card-foot' },
      h(
        'span',
        { class: 'pill', dataset: { state: card.state } },
        h('span', { class: 'pill-icon', 'aria-hidden': 'true' }, STATE_ICON[card.state]),
        STATE_LABEL[card.state],
      ),
      h(
        'span',
        { class: 'card-meta', title: checks ? plural(checks, 'story check') : null },
        criteria === 1 ? '1 criterion' : `${criteria} criteria`,
      ),
    ),
    card.missingDeps?.length
      ? h('span', { class: 'card-warning' }, `needs unknown ${card.missingDeps.join(', ')}`)
      : null,
    renderReview(card.review),
    renderDeps(story, joined),
  );
}

const REVIEW_WORDS = { ship: 'shipped', revise: 'changes asked', invalid: 'not shipped' };

/** The reviewer's newest answer (who, at which commit) and how often it sent the story back; from the runner's ledger. */
function renderReview(review) {
  if (!review || !Object.hasOwn(REVIEW_WORDS, review.verdict)) return null;
  const who = asText(review.reviewer)
    .split(' ')
    .map(
      (w) =>
        w
          .replace(/^["']|["']$/g, '')
          .split('/')
          .pop() || w,
    )
    .join(' ');
  const commit = asText(review.commit).slice(0, 7);
  const title = `reviewed by ${asText(review.reviewer)}${review.model ? ` (${asText(review.model)})` : ''}${commit ? ` at ${commit}` : ''}`;
  const revised = Number(review.revised) || 0;
  // A SHIP no sealed verdict record names is a ledger line: the runner's report, or anyone's who could write it.
  const reported = review.verdict === 'ship' && review.sealed !== true;
  return h(
    'span',
    {
      class: 'card-review',
      dataset: { review: review.verdict, sealed: review.sealed === true ? 'true' : 'false' },
      title,
    },
    h('span', { class: 'review-verdict' }, REVIEW_WORDS[review.verdict]),
    reported
      ? h(
          'span',
          {
            class: 'review-reported',
            title: 'no sealed verdict record names this SHIP yet (the loop is running, or it is only a ledger line)',
          },
          'reported',
        )
      : null,
    h(
      'span',
      { class: 'review-by' },
      `${who}${review.model ? ` · ${asText(review.model)}` : ''}${commit ? ` · ${commit}` : ''}`,
    ),
    revised ? h('span', { class: 'review-revised' }, `revised ${revised}×`) : null,
  );
}

/** Shown only in the bands layout, where no edge says what a story waits for; coloured by each one's state. */
function renderDeps(story, joined) {
  const deps = asList(story.dependsOn);
  if (!deps.length) return null;
  return h(
    'span',
    { class: 'card-deps' },
    'depends on',
    ...deps.map((id) =>
      h('span', { class: 'dep', dataset: { state: joined.byId.get(id)?.card.state ?? 'missing' } }, id),
    ),
  );
}

/** Edges are drawn after layout, from the cards' real positions, and again whenever the board resizes. */
export function drawEdges(joined, ui) {
  const board = document.getElementById('board');
  const layer = document.getElementById('edges');
  if (board.dataset.layout === 'bands') {
    layer.replaceChildren();
    return;
  }
  const origin = board.getBoundingClientRect();
  const box = (id) => board.querySelector(`.card[data-story-id="${CSS.escape(id)}"]`)?.getBoundingClientRect();
  const paths = [];
  for (const { story } of joined.items) {
    const to = box(story.id);
    for (const dep of asList(story.dependsOn)) {
      const from = box(dep);
      if (!to || !from) continue;
      const x1 = from.right - origin.left + board.scrollLeft;
      const y1 = from.top + from.height / 2 - origin.top + board.scrollTop;
      const x2 = to.left - origin.left + board.scrollLeft - 3;
      const y2 = to.top + to.height / 2 - origin.top + board.scrollTop;
      const bend = Math.max(24, (x2 - x1) / 2);
      const done = joined.byId.get(dep)?.story.passes === true;
      const active = ui.selected === story.id || ui.selected === dep;
      paths.push(
        svg('path', {
          d: `M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}`,
          class: `edge${done ? ' done' : ''}${active ? ' active' : ''}`,
          'marker-end': `url(#arrow${active ? '-active' : done ? '-done' : ''})`,
        }),
      );
    }
  }
  // Sized to the cards, never to the board's scroll size: a layer as big as the scroll area would
  // keep a scrollbar, once shown, from ever going away (each redraw measures the layer itself).
  const columns = document.getElementById('columns');
  layer.setAttribute('width', String(columns.offsetLeft + columns.offsetWidth));
  layer.setAttribute('height', String(columns.offsetTop + columns.offsetHeight));
  layer.replaceChildren(
    svg(
      'defs',
      null,
      marker('arrow', 'edge-head'),
      marker('arrow-done', 'edge-head done'),
      marker('arrow-active', 'edge-head active'),
    ),
    ...paths,
  );
}

function marker(id, cls) {
  return svg(
    'marker',
    {
      id,
      viewBox: '0 0 8 8',
      refX: '7',
      refY: '4',
      markerWidth: '8',
      markerHeight: '8',
      markerUnits: 'userSpaceOnUse',
      orient: 'auto',
    },
    svg('path', { d: 'M0,0 L8,4 L0,8 z', class: cls }),
  );
}
