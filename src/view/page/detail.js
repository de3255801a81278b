// The detail panel of one story: what it asks for, how it is checked, what the runner recorded.
import { h, inline, asText, asList, fmtMs, fmtTime } from './dom.js';
import { STATE_LABEL } from './board.js';

const VERIFICATION_TEXT = {
  verified:
    'Verified: the runner’s final gate ran its checks on the final commit and they passed, as its sealed verdict record says.',
  reported:
    'Reported: a runner’s ledger says the checks passed, but no sealed verdict record confirms it (the loop is still running, or its record is missing or does not check out).',
  unverified: 'Accepted on the agent’s word: no checks apply to this story.',
  rejected: 'The agent claimed it; the runner rejected the claim.',
};

export function renderDetail(joined, snap, ui) {
  const panel = document.getElementById('detail');
  const item = ui.selected ? joined.byId.get(ui.selected) : null;
  panel.hidden = !item;
  if (!item) return;
  const { story, card } = item;
  const body = document.getElementById('detail-body');
  const sameStory = body.dataset.storyId === story.id;
  const scrolled = panel.scrollTop;
  const planChecks = asList(snap.prd?.checks);
  const storyChecks = asList(story.checks);
  // Optional parts are null when absent; replaceChildren would print them as "null".
  body.replaceChildren(
    ...[
      h(
        'div',
        { class: 'detail-top' },
        h('span', { class: 'card-id' }, story.id),
        h('span', { class: 'pill', dataset: { state: card.state } }, STATE_LABEL[card.state]),
        h('span', { class: 'prio', title: 'priority' }, `P${asText(story.priority)}`),
        card.next ? h('span', { class: 'next-tag' }, 'next up') : null,
      ),
      h('h2', { id: 'detail-title', class: 'detail-title' }, asText(story.title) || '(untitled)'),
      card.state === 'skipped'
        ? h(
            'p',
            { class: 'verdict' },
            'Set aside by the plan (skip): the loop never works on it nor checks it, and it does not count against completion.',
          )
        : null,
      card.verification
        ? h(
            'p',
            { class: `verdict verdict-${card.verification}` },
            VERIFICATION_TEXT[card.verification],
            card.reason ? h('span', { class: 'verdict-reason' }, ' ', ...inline(card.reason)) : null,
          )
        : null,
      story.description ? h('p', { class: 'detail-description' }, ...inline(asText(story.description))) : null,
      section('Acceptance criteria', criteriaList(story)),
      relations(joined, story, ui),
      section(
        'Checks',
        planChecks.length || storyChecks.length
          ? checkList(planChecks, storyChecks)
          : h('p', { class: 'muted' }, 'No checks: a claim is accepted on the agent’s word.'),
      ),
      story.notes ? section('Notes', notes(asText(story.notes))) : null,
      section(
        `Verification ledger${card.ledger?.length ? ` (${card.ledger.length})` : ''}`,
        ledgerTable(card.ledger ?? []),
      ),
    ].filter(Boolean),
  );
  body.dataset.storyId = story.id;
  panel.scrollTop = sameStory ? scrolled : 0; // live updates keep the reader's place; a new story starts at the top
}

function section(title, ...content) {
  return h('section', { class: 'detail-section' }, h('h3', null, title), ...content);
}

function criteriaList(story) {
  const items = asList(story.acceptanceCriteria);
  if (!items.length) return h('p', { class: 'muted' }, 'None listed.');
  return h(
    'ul',
    { class: `criteria${story.passes === true ? ' done' : ''}` },
    items.map((c) => h('li', null, ...inline(c))),
  );
}

function relations(joined, story, ui) {
  const deps = asList(story.dependsOn);
  const needed = joined.dependents.get(story.id) ?? [];
  if (!deps.length && !needed.length) return null;
  const chip = (id) => {
    const other = joined.byId.get(id);
    if (!other) return h('span', { class: 'chip missing', title: 'no story has this id' }, id);
    return h(
      'button',
      {
        type: 'button',
        class: 'chip',
        dataset: { state: other.card.state },
        title: asText(other.story.title),
        onclick: () => ui.select(id),
      },
      id,
    );
  };
  return h(
    'div',
    { class: 'relations' },
    deps.length ? h('div', null, h('span', { class: 'relation-label' }, 'Depends on'), ...deps.map(chip)) : null,
    needed.length ? h('div', null, h('span', { class: 'relation-label' }, 'Needed by'), ...needed.map(chip)) : null,
  );
}

function checkList(planChecks, storyChecks) {
  const row = (cmd, scope) => h('li', null, h('code', { class: 'command' }, cmd), h('span', { class: 'scope' }, scope));
  return h(
    'ul',
    { class: 'checks' },
    planChecks.map((c) => row(c, 'plan')),
    storyChecks.map((c) => row(c, 'story')),
  );
}

/** The runner's own lines in notes start with "[ralph] " (its verdicts); they stand out from the agent's. */
function notes(text) {
  return h(
    'div',
    { class: 'notes' },
    text
      .split('\n')
      .map((line) => h('div', { class: line.startsWith('[ralph] ') ? 'runner-note' : null }, ...inline(line))),
  );
}

/** Newest first: each verdict, and under it the check runs that led to it. */
function ledgerTable(entries) {
  if (!entries.length) return h('p', { class: 'muted' }, 'No check has run for this story yet.');
  const rows = [...entries].reverse().map((e) => (e.status ? verdictRow(e) : checkRow(e)));
  return h(
    'table',
    { class: 'ledger' },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        h('th', null, 'time'),
        h('th', null, 'iter'),
        h('th', null, 'command · commit'),
        h('th', null, 'exit'),
        h('th', null, 'took'),
      ),
    ),
    h('tbody', null, rows),
  );
}

function verdictRow(e) {
  return h(
    'tr',
    { class: `verdict-row ${e.status}` },
    h('td', { class: 'when', title: asText(e.time) }, fmtTime(e.time)),
    h('td', { class: 'where', title: `loop ${asText(e.loop)}` }, e.iteration === null ? '' : `#${e.iteration}`),
    h(
      'td',
      { class: 'what', colspan: '2' },
      h(
        'span',
        {
          class: 'pill',
          dataset: { state: e.status === 'verified' ? 'verified' : e.status === 'rejected' ? 'rejected' : 'passed' },
        },
        e.status,
      ),
      e.reason ? h('span', { class: 'verdict-text' }, ' ', ...inline(e.reason)) : null,
    ),
    h('td', { class: 'took' }, e.durationMs === null ? '' : fmtMs(e.durationMs)),
  );
}

function checkRow(e) {
  const failed = e.timedOut || e.signal !== null || (e.exitCode !== null && e.exitCode !== 0);
  const exit = e.timedOut
    ? '✕ timeout'
    : e.exitCode === null
      ? e.signal
        ? `✕ ${e.signal}`
        : ''
      : failed
        ? `✕ ${e.exitCode}`
        : `✓ ${e.exitCode}`;
  return h(
    'tr',
    { class: failed ? 'failed' : 'ok' },
    h('td', { class: 'when', title: asText(e.time) }, fmtTime(e.time)),
    h('td', { class: 'where', title: `loop ${asText(e.loop)}` }, e.iteration === null ? '' : `#${e.iteration}`),
    h(
      'td',
      { class: 'what' },
      h('code', null, e.command ?? '—'),
      h(
        'span',
        { class: 'sha' },
        [e.scope, e.commit ? e.commit.slice(0, 7) : null, e.shared ? 'shared run' : null].filter(Boolean).join(' · '),
      ),
    ),
    h('td', { class: 'exit', title: 'exit code' }, exit),
    h('td', { class: 'took' }, e.durationMs === null ? '' : fmtMs(e.durationMs)),
  );
}
