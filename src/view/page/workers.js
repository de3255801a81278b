// A --parallel run's panel inside its loop card: each worker (story, phase, iteration, agent, elapsed), the merge
// queue, and the stories merged and given up. state.json is hand-writable: every field is checked, shown as text.
import { h, asText } from './dom.js';

// What each phase means to someone watching the run; the engine's names (WorkerPhase) stay on the element.
const PHASES = {
  idle: 'idle',
  agent: 'agent working',
  verifying: 'verifying',
  queued: 'in merge queue',
  merging: 'merging',
};

export function renderWorkers(loop) {
  const p = loop.parallel;
  if (!p || typeof p !== 'object' || Array.isArray(p)) return null;
  const workers = (Array.isArray(p.states) ? p.states : []).filter(isObject);
  const queue = (Array.isArray(p.queue) ? p.queue : []).filter(isObject);
  const merged = Array.isArray(p.merged) ? p.merged.map(asText) : [];
  const givenUp = isObject(p.givenUp) ? Object.entries(p.givenUp) : [];
  return h(
    'section',
    { class: 'loop-workers', 'aria-label': 'workers' },
    h(
      'ul',
      { class: 'workers' },
      workers.map((w) => renderWorker(w, loop)),
    ),
    queue.length
      ? h(
          'div',
          { class: 'merge-queue' },
          h('span', { class: 'label' }, 'merge queue'),
          h(
            'ol',
            null,
            queue.map((q) =>
              h(
                'li',
                { dataset: { story: asText(q.story) } },
                h('code', null, asText(q.story)),
                Number.isInteger(q.worker) ? ` w${q.worker}` : '',
              ),
            ),
          ),
        )
      : null,
    merged.length
      ? h(
          'div',
          { class: 'merged' },
          h('span', { class: 'label' }, 'merged'),
          merged.map((id) => h('code', null, id)),
        )
      : null,
    givenUp.length
      ? h(
          'div',
          { class: 'given-up' },
          h('span', { class: 'label' }, 'given up'),
          h(
            'ul',
            null,
            givenUp.map(([id, why]) => h('li', { dataset: { story: id } }, h('code', null, id), ` ${asText(why)}`)),
          ),
        )
      : null,
  );
}

function renderWorker(w, loop) {
  const phase = asText(w.phase);
  const story = asText(w.story);
  const running = loop.alive && Number.isInteger(w.agentPid) && w.agentPid > 0;
  return h(
    'li',
    {
      class: `worker phase-${phase.replace(/[^a-z]/g, '') || 'unknown'}`,
      dataset: { worker: asText(w.worker), phase },
    },
    h(
      'div',
      { class: 'worker-top' },
      h('span', { class: 'worker-n' }, Number.isInteger(w.worker) ? `w${w.worker}` : 'w?'),
      h('code', { class: 'worker-story', title: asText(w.branch) || null }, story || '—'),
      h('span', { class: 'worker-phase' }, PHASES[phase] ?? (phase || '?')),
    ),
    h(
      'div',
      { class: 'worker-facts' },
      Number.isInteger(w.iteration) ? h('span', { class: 'worker-iter' }, `iteration ${w.iteration}`) : null,
      // Only a worker whose agent runs now names it: between agent runs (verifying, queued, idle) none is at work.
      running
        ? h(
            'span',
            { class: 'worker-agent', title: `its agent runs as process group ${w.agentPid}` },
            `${asText(loop.agent) || 'agent'} (pid ${w.agentPid})`,
          )
        : null,
      story
        ? h(
            'span',
            {
              class: 'elapsed',
              title: 'on this story',
              dataset: { from: asText(w.startedAt), to: loop.alive ? '' : asText(loop.updatedAt) },
            },
            '',
          )
        : null,
    ),
  );
}

function isObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
