// /api/prd's body (view/prd-body.ts readPrdBody) carries the plan as the bytes it was read from, and a dashboard keeps
// what it parsed and laid out from one read to the next (PrdCache). Either way the body is the same JSON value as
// readPrdSnapshot written out whole, read after read, whatever was written in between; and a plan written again with
// one story changed is neither parsed whole nor written out whole again (counted, not timed).
import { constants } from 'node:buffer';
import { execFileSync } from 'node:child_process';
import { mkdirSync, renameSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitdir } from '../../support/repo.js';
import { makeLargePlan } from '../../support/large-plan.js';
import { resolveViewPaths } from '../../../src/view/snapshot.js';
import { CARDS_PER_CHUNK, createPrdCache, readPrdBody, readPrdSnapshot, sameJson } from '../../../src/view/prd-body.js';
import { renderEvent } from '../../../src/view/events.js';

function setup() {
  const dir = gitdir();
  const paths = resolveViewPaths(dir);
  const write = (text: string | Buffer) => {
    writeFileSync(`${paths.prd}.tmp`, text);
    renameSync(`${paths.prd}.tmp`, paths.prd);
  };
  mkdirSync(path.join(dir, 'ralph'), { recursive: true });
  return { paths, write };
}

/** The value the body carries, and the value it carried when the snapshot was written out whole. */
function values(body: Buffer[], paths: ReturnType<typeof resolveViewPaths>) {
  return {
    got: JSON.parse(Buffer.concat(body).toString('utf8')),
    want: JSON.parse(JSON.stringify(readPrdSnapshot(paths))),
  };
}

describe('readPrdBody', () => {
  it.each([
    ['pretty, LF', (v: unknown) => `${JSON.stringify(v, null, 2)}\n`],
    ['pretty, CRLF', (v: unknown) => JSON.stringify(v, null, 2).replaceAll('\n', '\r\n')],
    ['compact', (v: unknown) => JSON.stringify(v)],
  ])('%s: the same value as the snapshot, keys in the same order, the plan as written', (_name, writePlan) => {
    const { paths, write } = setup();
    const plan = makeLargePlan(20);
    plan.userStories[3].title = 'quotes " and \\ and é and 😀 and \u2028';
    write(writePlan(plan));
    const body = readPrdBody(paths);
    const { got, want } = values(body, paths);
    expect(got).toEqual(want);
    expect(Object.keys(got)).toEqual(['file', 'exists', 'error', 'prd', 'cards', 'summary']);
    expect(Buffer.concat(body).includes(Buffer.from(writePlan(plan)))).toBe(true);
  });

  it('a plan that is not UTF-8, not JSON, the wrong shape or missing: as the snapshot says', () => {
    const { paths, write } = setup();
    const plan = makeLargePlan(3);
    const text = `${JSON.stringify(plan, null, 2)}\n`;
    for (const bytes of [
      Buffer.concat([Buffer.from(text.slice(0, 40)), Buffer.from([0xff, 0xfe]), Buffer.from(text.slice(40))]),
      Buffer.from('{"userStories": ['),
      Buffer.from('{"userStories": [{"title": "no id"}]}'),
      Buffer.from(`\ufeff${text}`),
    ]) {
      write(bytes);
      const { got, want } = values(readPrdBody(paths), paths);
      expect(got).toEqual(want);
    }
    const { got, want } = values(
      readPrdBody(resolveViewPaths(paths.cwd, 'ralph/none.json')),
      resolveViewPaths(paths.cwd, 'ralph/none.json'),
    );
    expect(got).toEqual(want);
    expect(got.exists).toBe(false);
  });

  it('a named pipe the agent left at ralph/prd.json: answered at once, never waited on for a writer', () => {
    const { paths } = setup();
    execFileSync('mkfifo', [paths.prd]);
    const { got, want } = values(readPrdBody(paths), paths);
    expect(got).toEqual(want);
    expect(got.prd).toBeNull();
  });

  it('a plan past the longest string JavaScript makes (the agent writes the file): an error the page shows, nothing thrown', () => {
    const { paths, write } = setup();
    write('{"userStories":[]}');
    truncateSync(paths.prd, constants.MAX_STRING_LENGTH + 1); // sparse: NUL bytes
    for (const cache of [undefined, createPrdCache()]) {
      const snapshot = JSON.parse(Buffer.concat([readPrdBody(paths, cache)].flat()).toString());
      expect(snapshot).toMatchObject({ exists: true, prd: null });
      expect(snapshot.error).toMatch(/is too large to read/);
    }
  });

  it('its server-sent event is one data line holding the same value', () => {
    const { paths, write } = setup();
    write(JSON.stringify(makeLargePlan(5), null, 2).replaceAll('\n', '\r\n'));
    const body = readPrdBody(paths);
    const event = renderEvent('prd', body).toString('utf8');
    const lines = event.split('\n');
    expect(lines.slice(0, 2).map((l) => l.split(':')[0])).toEqual(['event', 'data']);
    expect(lines.slice(2)).toEqual(['', '']);
    expect(event).not.toContain('\r');
    expect(JSON.parse(lines[1].slice('data: '.length))).toEqual(JSON.parse(Buffer.concat(body).toString()));
  });
});

describe('readPrdBody with a dashboard cache', () => {
  it('read after read the same value as made afresh, whatever was written in between', () => {
    const { paths, write } = setup();
    const cache = createPrdCache();
    const plan = makeLargePlan(300);
    const text = () => `${JSON.stringify(plan, null, 2)}\n`;
    const ledger = (stories: string[]) => {
      mkdirSync(path.join(paths.runs, 'L1'), { recursive: true });
      const lines = stories.map((story, i) =>
        JSON.stringify({
          kind: 'verdict',
          time: `2026-01-01T00:00:0${i}Z`,
          loop: 'L1',
          iteration: i + 1,
          story,
          commit: null,
          command: null,
          exitCode: null,
          status: i % 2 ? 'rejected' : 'verified',
          reason: `r${i}`,
          durationMs: 1,
          outputSha256: null,
        }),
      );
      writeFileSync(path.join(paths.runs, 'L1/ledger.jsonl'), `${lines.join('\n')}\n`);
    };
    const steps: [string, () => void][] = [
      ['the first read', () => write(text())],
      ['the same bytes again', () => write(text())],
      ['a story passes', () => (plan.userStories[150].passes = true)],
      ['the next story picked changes', () => (plan.userStories[1].passes = true)],
      ['a title edited', () => (plan.userStories[7].title = 'renamed "quoted"')],
      ['a dependency moved', () => (plan.userStories[20].dependsOn = ['US-00003'])],
      ['a priority changed', () => (plan.userStories[40].priority = 0)],
      ['a story added', () => plan.userStories.push({ ...plan.userStories[0], id: 'US-NEW', dependsOn: ['US-00300'] })],
      ['a story removed', () => plan.userStories.splice(10, 1)],
      ['a ghost dependency', () => (plan.userStories[30].dependsOn = ['GHOST'])],
      ['two stories changed', () => ((plan.userStories[2].passes = true), (plan.userStories[200].passes = true))],
      ['the project renamed', () => (plan.project = 'Renamed')],
      ['ledger lines for two stories', () => ledger(['US-00002', 'US-00150'])],
      ['another ledger line', () => ledger(['US-00002', 'US-00150', 'US-00150'])],
      ['broken', () => write('{"userStories": [')],
      ['mended', () => (plan.userStories[5].notes = 'mended')],
    ];
    for (const [what, step] of steps) {
      step();
      if (what !== 'broken' && what !== 'the first read' && what !== 'the same bytes again') write(text());
      const { got, want } = values(readPrdBody(paths, cache), paths);
      expect(got, what).toEqual(want);
      expect(Buffer.concat(readPrdBody(paths, cache)).equals(Buffer.concat(readPrdBody(paths))), what).toBe(true);
    }
  });

  it("one story's passes flipped: nothing parsed whole, no layout made, one run of cards written again", () => {
    const { paths, write } = setup();
    const cache = createPrdCache();
    const plan = makeLargePlan(1000);
    plan.userStories.forEach((s) => (s.passes = false));
    write(`${JSON.stringify(plan, null, 2)}\n`);
    readPrdBody(paths, cache);
    const runs = Math.ceil(1000 / CARDS_PER_CHUNK);
    expect(cache).toMatchObject({ fullParses: 1, cardRuns: runs });
    expect(cache.board.reused).toBe(0);
    // The last story: its card changes and no other (the next one to pick is the first story either way).
    plan.userStories[999].passes = true;
    write(`${JSON.stringify(plan, null, 2)}\n`);
    const body = readPrdBody(paths, cache);
    expect(cache).toMatchObject({ fullParses: 1, cardRuns: runs + 1 });
    expect(cache.board.reused).toBe(1);
    expect(JSON.parse(Buffer.concat(body).toString()).cards[999].state).toBe('passed');
    // A story added: parsed whole and laid out again.
    plan.userStories.push({ ...plan.userStories[0], id: 'US-NEW' });
    write(`${JSON.stringify(plan, null, 2)}\n`);
    readPrdBody(paths, cache);
    expect(cache.fullParses).toBe(2);
    expect(cache.board.reused).toBe(1);
  });
});

describe('sameJson', () => {
  it('alike only when JSON.stringify writes them alike', () => {
    const alike: [unknown, unknown][] = [
      [
        { a: 1, b: [null, 'x', { c: true }] },
        { a: 1, b: [null, 'x', { c: true }] },
      ],
      [[], []],
      [0, -0],
    ];
    const unlike: [unknown, unknown][] = [
      [
        { a: 1, b: 2 },
        { b: 2, a: 1 },
      ], // the same keys in another order are written otherwise
      [{ a: 1 }, { a: 1, b: 2 }],
      [
        [1, 2],
        [1, 2, 3],
      ],
      [{ a: [] }, { a: {} }],
      ['1', 1],
      [null, {}],
    ];
    for (const [x, y] of alike) expect(sameJson(x, y)).toBe(JSON.stringify(x) === JSON.stringify(y));
    for (const [x, y] of unlike) {
      expect(JSON.stringify(x)).not.toBe(JSON.stringify(y));
      expect(sameJson(x, y)).toBe(false);
    }
    // Told apart although written alike: never the other way round.
    expect(sameJson({ a: undefined }, {})).toBe(false);
    expect(sameJson(Number.NaN, Number.NaN)).toBe(false);
  });
});
