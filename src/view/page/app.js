// ralphkit view: the page keeps one event stream open; the server pushes the plan, the progress
// log and the loops on connect and again whenever they change on disk.
import { h } from './dom.js';
import { renderHeader, joinStories, renderBoard, drawEdges, fitBoard } from './board.js';
import { renderDetail } from './detail.js';
import { renderLoops, renderLog, tickLoops } from './side.js';

const state = { prd: null, progress: null, loops: null, joined: joinStories({}) };

const ui = {
  selected: decodeURIComponent(location.hash.slice(1)) || null,
  previousStates: null,
  select(id) {
    ui.selected = id && id !== ui.selected ? id : null;
    history.replaceState(null, '', ui.selected ? `#${encodeURIComponent(ui.selected)}` : location.pathname);
    renderStories();
  },
  hasStory: (id) => state.joined.byId.has(id),
};

function onPrd(snap) {
  showBanner(snap);
  if (!snap.prd && snap.exists && state.prd?.prd) return; // unreadable right now (often mid-save): keep the last good plan
  state.prd = snap;
  state.joined = joinStories(snap);
  renderHeader(snap);
  renderStories();
  if (state.progress) renderLog(state.progress, ui); // story ids in the log become links
}

function renderStories() {
  const snap = state.prd ?? {};
  const empty = document.getElementById('board-empty');
  empty.textContent =
    snap.exists === false
      ? `No plan at ${snap.file} yet. Write one with the ralph skill, or run ralphkit install for an example.`
      : snap.error
        ? `${snap.file} cannot be read yet; the message above says why.`
        : 'The plan has no stories.';
  renderBoard(state.joined, ui);
  renderDetail(state.joined, snap, ui);
  requestAnimationFrame(() => drawEdges(state.joined, ui));
}

function showBanner(snap) {
  const banner = document.getElementById('banner');
  banner.hidden = !snap.error;
  if (snap.error)
    banner.replaceChildren(
      h('strong', null, 'Cannot read the plan. '),
      snap.error,
      state.prd ? ' — showing the last version that could be read.' : '',
    );
}

function setConnection(status, label) {
  const el = document.getElementById('connection');
  el.dataset.state = status;
  el.querySelector('.label').textContent = label;
}

function connect() {
  const events = new EventSource('/api/events');
  const on = (kind, fn) => events.addEventListener(kind, (e) => fn(JSON.parse(e.data)));
  on('prd', onPrd);
  on('progress', (snap) => renderLog((state.progress = snap), ui));
  on('loops', (snap) => renderLoops((state.loops = snap)));
  events.onopen = () => setConnection('live', 'live');
  events.onerror = () => {
    if (events.readyState === EventSource.CLOSED) {
      // The browser gave up (the server answered with an error); try again ourselves.
      setConnection('offline', 'offline · retrying');
      setTimeout(connect, 2000);
    } else {
      setConnection('reconnecting', 'reconnecting…');
    }
  };
}

function wire() {
  document.getElementById('detail-close').addEventListener('click', () => ui.select(null));
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && ui.selected) ui.select(null);
  });
  window.addEventListener('hashchange', () => {
    const id = decodeURIComponent(location.hash.slice(1)) || null;
    if (id !== ui.selected) ui.select(id);
  });
  const board = document.getElementById('board');
  // A layout change resizes the board it observes: made in the next frame, not inside the observer
  // (which would report an undelivered resize loop as a page error).
  new ResizeObserver(() =>
    requestAnimationFrame(() => {
      fitBoard(state.joined);
      drawEdges(state.joined, ui);
    }),
  ).observe(board);
  setInterval(() => tickLoops(), 1000);
}

wire();
connect();
