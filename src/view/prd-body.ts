// The plan as the dashboard reads it: /api/prd's snapshot (the plan, its cards and summary) and its body, the plan's
// bytes as read with the cards' JSON around them. A card is verified only from the sealed verdict record of the loop
// its plan belongs to (refs/notes/ralphkit, checked with the key of $RALPH_KEY_DIR or ~/.config/ralphkit), and only
// when the record verified that very story. Apart from the other reads (snapshot.ts) because only the plan is kept
// from one read to the next (`PrdCache`): for a plan of thousands of stories each read is a parse, a board and
// megabytes of JSON, so what did not change is not parsed, laid out or written again.
import { constants, isAscii, isUtf8 } from 'node:buffer';
import { statSync } from 'node:fs';
import { readBytesOrNull } from '../util/read.js';
import path from 'node:path';
import type { Prd } from '../prd/types.js';
import { readVerdictRecordsSync } from '../engine/store/verdict-record.js';
import { findPlanLoop, matchSealedStories, readLoopBranch } from '../engine/store/loop-plan.js';
import { readAllStates } from '../engine/store/state-file.js';
import { planBoard, type BoardPlan, type StoryCard } from './board.js';
import { createBoardCache, type BoardCache } from './board-layout.js';
import { spliceParse, type ParsedPlan } from './plan-splice.js';
import { readLedgers, type ViewPaths } from './snapshot.js';

export interface PrdSnapshot extends Partial<BoardPlan> {
  /** The plan's path relative to the repository. */
  file: string;
  exists: boolean;
  /** Why the plan could not be shown (unreadable JSON, wrong shape); the page keeps the last good one. */
  error: string | null;
  prd: Prd | null;
}

export function readPrdSnapshot(paths: ViewPaths): PrdSnapshot {
  return readPrd(paths, null).snapshot;
}

/**
 * What a dashboard keeps from one read of the plan to the next, so that a plan written again with little changed
 * (a story's passes flipped) costs little: the plan as parsed, so that only a changed story is parsed again
 * (view/plan-splice.ts); the board's layout (view/board-layout.ts `BoardCache`); and the cards as JSON in runs of
 * CARDS_PER_CHUNK, each run used again when its cards are the same as before. `fullParses` and `cardRuns` count the
 * plans parsed whole and the runs made.
 */
export interface PrdCache {
  plan: ParsedPlan | null;
  board: BoardCache;
  cards: { list: StoryCard[]; runs: Buffer[] } | null;
  fullParses: number;
  cardRuns: number;
}

export function createPrdCache(): PrdCache {
  return { plan: null, board: createBoardCache(), cards: null, fullParses: 0, cardRuns: 0 };
}

/** Cards per run of JSON: small enough that a changed card costs little, large enough to be few chunks. */
export const CARDS_PER_CHUNK = 64;

/**
 * /api/prd's body, as the chunks it is sent in: `readPrdSnapshot` as JSON, its plan the very text it was parsed from
 * (the bytes of the file, its whitespace and key order as written; the same value to a JSON reader) instead of that
 * text parsed and written again, which for a plan of thousands of stories cost more than everything else the body
 * needs; the file's bytes go out as read, not copied into one buffer. A plan that is not valid UTF-8 goes in as
 * read with U+FFFD for what could not be read, as it did when it was written again.
 */
export function readPrdBody(paths: ViewPaths, cache: PrdCache | null = null): Buffer[] {
  const { snapshot, planBytes } = readPrd(paths, cache);
  if (!snapshot.prd || planBytes === null) return [Buffer.from(JSON.stringify(snapshot))];
  const { prd: _prd, cards = [], summary, ...rest } = snapshot;
  // Keys in the order JSON.stringify(snapshot) writes them: file, exists, error, prd, cards, summary.
  const head = JSON.stringify(rest);
  return [
    Buffer.from(`${head.slice(0, -1)},"prd":`),
    planBytes,
    Buffer.from(',"cards":['),
    ...cardRuns(cards, cache),
    Buffer.from(`],"summary":${JSON.stringify(summary)}}`),
  ];
}

/** The cards' JSON without its brackets, in runs: run k holds cards k·CARDS_PER_CHUNK onwards, with a comma before it but the first. */
function cardRuns(cards: StoryCard[], cache: PrdCache | null): Buffer[] {
  const before = cache?.cards ?? null;
  const runs: Buffer[] = [];
  for (let from = 0; from < cards.length; from += CARDS_PER_CHUNK) {
    const to = Math.min(from + CARDS_PER_CHUNK, cards.length);
    const k = runs.length;
    if (before && k < before.runs.length && Math.min(from + CARDS_PER_CHUNK, before.list.length) === to) {
      let same = true;
      for (let i = from; same && i < to; i++) same = sameCard(cards[i], before.list[i]);
      if (same) {
        runs.push(before.runs[k]);
        continue;
      }
    }
    const json = cards.slice(from, to).map((c) => JSON.stringify(c));
    runs.push(Buffer.from(`${k ? ',' : ''}${json.join(',')}`));
    if (cache) cache.cardRuns++;
  }
  if (cache) cache.cards = { list: cards, runs };
  return runs;
}

/** Cards that JSON.stringify writes alike (see `sameJson`). */
function sameCard(a: StoryCard, b: StoryCard): boolean {
  return sameJson(a, b);
}

/**
 * Whether two JSON values (plain objects, lists, strings, numbers, booleans, null) are written alike by JSON.stringify:
 * the same keys in the same order, values alike. Anything else it may call different, never alike when they are not.
 */
export function sameJson(x: unknown, y: unknown): boolean {
  if (x === y) return typeof x !== 'number' || Number.isFinite(x);
  if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
  if (Array.isArray(x) || Array.isArray(y)) {
    if (!Array.isArray(x) || !Array.isArray(y) || x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!sameJson(x[i], y[i])) return false;
    return true;
  }
  if (Object.getPrototypeOf(x) !== Object.prototype || Object.getPrototypeOf(y) !== Object.prototype) return false;
  const keys = Object.keys(x);
  const other = Object.keys(y);
  if (keys.length !== other.length) return false;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (key !== other[i]) return false;
    const v = (x as Record<string, unknown>)[key];
    if (v === undefined || !sameJson(v, (y as Record<string, unknown>)[key])) return false;
  }
  return true;
}

/** The snapshot, and the plan's bytes as the body carries them (valid UTF-8), or null when there is no plan to show. */
function readPrd(paths: ViewPaths, cache: PrdCache | null): { snapshot: PrdSnapshot; planBytes: Buffer | null } {
  const file = path.relative(paths.cwd, paths.prd) || paths.prd;
  const failed = (error: string) => ({ snapshot: { file, exists: true, error, prd: null }, planBytes: null });
  // Past the longest string V8 makes no parse is possible, and the agent writes the file: not read at all.
  const size = sizeOf(paths.prd);
  if (size !== null && size > constants.MAX_STRING_LENGTH)
    return failed(
      `${file} is too large to read (${size} bytes; a plan must stay under ${constants.MAX_STRING_LENGTH})`,
    );
  const bytes = readBytesOrNull(paths.prd);
  if (bytes === null) return { snapshot: { file, exists: false, error: null, prd: null }, planBytes: null };
  const utf8 = isUtf8(bytes);
  // The plan read before, with only what changed parsed again; a whole parse when that cannot tell.
  const spliced = cache?.plan && utf8 ? spliceParse(cache.plan, bytes) : null;
  let prd: Prd;
  let planBytes = bytes;
  if (spliced) prd = spliced.value as unknown as Prd;
  else {
    // ASCII read as Latin-1 is the same text, and Node makes it several times faster than UTF-8 (plans are mostly ASCII).
    const text = isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
    if (!utf8) planBytes = Buffer.from(text);
    if (cache) cache.fullParses++;
    try {
      prd = JSON.parse(text) as Prd;
    } catch (err) {
      return failed(`${file} is not valid JSON: ${(err as Error).message}`);
    }
  }
  const shapeError = checkShape(prd);
  if (shapeError) return failed(`${file}: ${shapeError}`);
  if (cache && utf8) cache.plan = spliced ?? { bytes, value: prd as unknown as ParsedPlan['value'], spans: null };
  // The record of the loop this plan belongs to (its file, its branch), for the stories that record verified: a new
  // plan that reuses an id, or another loop's newer record, never makes a card verified (store/loop-plan.ts, as status).
  const loop = findPlanLoop(paths.cwd, readAllStates(paths.cwd), file, prd.branchName);
  const record = loop ? (readVerdictRecordsSync(paths.cwd).get(loop.id) ?? null) : null;
  const snapshot: PrdSnapshot = {
    file,
    exists: true,
    error: null,
    prd,
    ...planBoard(
      prd,
      readLedgers(paths),
      matchSealedStories(paths.cwd, record, file, prd.userStories, loop ? readLoopBranch(paths.cwd, loop, file) : null),
      record,
      cache?.board ?? null,
    ),
  };
  return { snapshot, planBytes };
}

// Only what the page needs to draw; `ralphkit validate` is the place for a full report.
function checkShape(prd: unknown): string | null {
  if (!prd || typeof prd !== 'object' || Array.isArray(prd)) return 'the plan must be a JSON object';
  const stories = (prd as Prd).userStories;
  if (!Array.isArray(stories)) return 'userStories must be a list';
  const bad = stories.findIndex((s) => !s || typeof s !== 'object' || typeof s.id !== 'string' || !s.id);
  if (bad >= 0) return `userStories[${bad}] needs an id (run ralphkit validate for details)`;
  return null;
}

function sizeOf(file: string): number | null {
  try {
    return statSync(file).size;
  } catch {
    return null;
  }
}
