// Validates prd.json text (SPEC §5) and reports every problem with its line and column. Pure, and built-ins
// only: `ralphkit validate` and the loop engine (bundled alone into ralph.mjs) both call it.
import { branchNameProblem } from './branch-name.js';
import { storyIdNeedsEscaping, storyRefPart } from './story-ref.js';
import { needsShellQuoting } from '../util/shell-quote.js';
import { findCycles } from './graph.js';
import { parseJsonWithPositions, type JsonArray, type JsonNode, type JsonScalar } from './json-parse.js';
import { makeLocator } from './locate.js';
import { quickCheckPlan } from './quick-check.js';
import {
  PLAN_FIELDS,
  STORY_FIELDS,
  checkFields,
  checkMeantKeys,
  describeNode,
  lastEntry,
  type Report,
} from './schema.js';
import type { Prd, PrdProblem, PrdValidation } from './types.js';
import { describeUnsafeChars, escapeUnsafe, UNSAFE_CHAR } from './unsafe-text.js';

/** Where the checks send what they find: problems (the plan is refused) and warnings (it runs). */
interface Reports {
  report: Report;
  warn: Report;
}

/** What the dependency checks need to know about one story. */
interface StoryFacts {
  index: number;
  label: string;
  id?: JsonScalar;
  dependsOn: JsonScalar[];
}

/**
 * Every problem in `text`, sorted by position; `prd` is set only when there is none. A valid plan is one
 * JSON.parse reads to the same value, so callers may parse it again. `file` is copied into each problem.
 */
export function validatePrdText(text: string, file: string): PrdValidation {
  // Most plans have nothing wrong, and JSON.parse with a walk over its result tells so quickly (quick-check.ts).
  // The position-tracking parser runs only when there may be a problem to find and place.
  const clean = quickCheckPlan(text);
  return clean ? { prd: clean, problems: [], warnings: [] } : validateWithPositions(text, file);
}

/** validatePrdText the long way, whatever the text: every check on the position parser's tree. */
export function validateWithPositions(text: string, file: string): PrdValidation {
  const locate = makeLocator(text);
  const problems: PrdProblem[] = [];
  const warnings: PrdProblem[] = [];
  const collect =
    (list: PrdProblem[]): Report =>
    (offset, code, message, path) => {
      list.push({ file, ...(offset === undefined ? {} : locate(offset)), message, code, path });
    };
  const report = collect(problems);
  const reports: Reports = { report, warn: collect(warnings) };
  // JSON.parse rejects a byte order mark, and the engine reads the plan with JSON.parse too.
  const bom = text.charCodeAt(0) === 0xfeff;
  if (bom) report(0, 'syntax', 'the file starts with a byte order mark (BOM); save it as UTF-8 without one', '');
  const parsed = parseJsonWithPositions(bom ? ` ${text.slice(1)}` : text);
  if (!parsed.ok) {
    report(parsed.error.offset, 'syntax', parsed.error.message, '');
    return { problems: sortProblems(problems), warnings };
  }
  checkDuplicateKeys(parsed.root, [], report);
  checkPlan(parsed.root, reports);
  sortProblems(warnings);
  if (problems.length > 0) return { problems: sortProblems(problems), warnings };
  // The text parsed cleanly without a BOM or duplicate keys, so JSON.parse reads the same value, faster.
  try {
    return { prd: JSON.parse(text) as Prd, problems, warnings };
  } catch (err) {
    // Only if this parser and the engine's JSON.parse ever disagree: report it rather than crash.
    report(undefined, 'syntax', `JSON.parse rejects the file: ${(err as Error).message}`, '');
    return { problems, warnings };
  }
}

function checkPlan(root: JsonNode, { report, warn }: Reports): void {
  if (root.kind !== 'object') {
    report(root.offset, 'type', `the plan must be a JSON object, found ${describeNode(root)}`, '');
    return;
  }
  const fields = checkFields(root, PLAN_FIELDS, { path: '', label: '' }, report);
  checkMeantKeys(root, PLAN_FIELDS, { path: '', label: '' }, warn);
  for (const key of ['branchName', 'baseBranch']) {
    const node = fields.get(key) as JsonScalar | undefined;
    const reason = node && branchNameProblem(String(node.value));
    if (node && reason)
      report(
        node.offset,
        'branch-name',
        `${key} ${JSON.stringify(node.value)} is not a valid git branch name: ${reason}`,
        key,
      );
    else if (node?.kind === 'string' && needsShellQuoting(String(node.value))) {
      warn(
        node.offset,
        'shell-word',
        `${key} ${JSON.stringify(node.value)} holds characters a shell reads (such as $ \` ; & | ( ) < > ' " ! # * ? { }): the runner's hints quote it, but a command typed with it unquoted runs them; use letters, digits and - _ . /`,
        key,
      );
    }
  }
  const stories = fields.get('userStories') as JsonArray | undefined;
  if (!stories) return;
  if (stories.items.length === 0)
    report(stories.offset, 'empty', 'userStories is empty; add at least one story', 'userStories');
  const facts = stories.items.map((node, index) => checkStory(node, index, { report, warn }));
  checkIds(facts, report);
  checkDependencies(facts, report);
}

function checkStory(node: JsonNode, index: number, { report, warn }: Reports): StoryFacts {
  const path = `userStories[${index}]`;
  if (node.kind !== 'object') {
    report(node.offset, 'type', `${path} must be an object, found ${describeNode(node)}`, path);
    return { index, label: path, dependsOn: [] };
  }
  const idEntry = lastEntry(node, 'id');
  // An id is printed in every message about its story: never with a character that could reorder the line, and
  // not at all when it is blank (its own "id is empty" says so).
  const idText =
    idEntry?.value.kind === 'string' && String(idEntry.value.value).trim()
      ? ` (${escapeUnsafe(String(idEntry.value.value))})`
      : '';
  const label = `${path}${idText}`;
  const place = { path, label: `${label}: ` };
  const fields = checkFields(node, STORY_FIELDS, place, report);
  checkMeantKeys(node, STORY_FIELDS, place, warn);
  checkStoryText(fields, place, warn);
  checkIdAsRef(fields.get('id') as JsonScalar | undefined, place, warn);
  const passes = fields.get('passes') as JsonScalar | undefined;
  if (passes?.kind === 'string') {
    warn(
      passes.offset,
      'skip-spelling',
      `${label}: passes ${JSON.stringify(passes.value)} is read as "skip": true, so the story is set aside (never worked on, not counted); say so directly with "passes": false, "skip": true`,
      `${path}.passes`,
    );
  }
  const deps = fields.get('dependsOn') as JsonArray | undefined;
  return {
    index,
    label,
    id: fields.get('id') as JsonScalar | undefined,
    dependsOn: (deps?.items ?? []) as JsonScalar[],
  };
}

/** An id or title holding a control or bidi character: shown, logged and committed, it can hide what it says. */
function checkStoryText(fields: Map<string, JsonNode>, place: { path: string; label: string }, warn: Report): void {
  for (const key of ['id', 'title']) {
    const node = fields.get(key) as JsonScalar | undefined;
    if (!node || !UNSAFE_CHAR.test(String(node.value))) continue;
    const chars = describeUnsafeChars(String(node.value)).join(', ');
    warn(
      node.offset,
      'unsafe-text',
      `${place.label}the ${key} contains ${chars}, which can make it display differently from what it is; remove ${chars.includes(',') ? 'them' : 'it'}`,
      `${place.path}.${key}`,
    );
  }
}

/** An id --parallel cannot use as it is in a branch name (story-ref.ts encodes it): said, not refused. */
function checkIdAsRef(node: JsonScalar | undefined, place: { path: string; label: string }, warn: Report): void {
  if (node?.kind !== 'string') return;
  const id = String(node.value);
  // An empty id is a problem of its own; an unsafe one is already told to lose those characters.
  if (!id.trim() || UNSAFE_CHAR.test(id) || !storyIdNeedsEscaping(id)) return;
  warn(
    node.offset,
    'story-id-ref',
    `${place.label}the id is not usable as it is in a git branch name, so --parallel names its branch with it encoded (<branchName>--${storyRefPart(id)}); ids of letters, digits, - _ and single dots read as they are`,
    `${place.path}.id`,
  );
}

function checkIds(facts: StoryFacts[], report: Report): void {
  const first = new Map<string, StoryFacts>();
  for (const story of facts) {
    if (!story.id) continue;
    const id = String(story.id.value);
    const earlier = first.get(id);
    if (earlier)
      report(
        story.id.offset,
        'duplicate-id',
        `userStories[${story.index}]: duplicate id "${id}", already used by userStories[${earlier.index}]`,
        `userStories[${story.index}].id`,
      );
    else first.set(id, story);
  }
}

function checkDependencies(facts: StoryFacts[], report: Report): void {
  const indexOf = new Map<string, number>();
  for (const story of facts)
    if (story.id && !indexOf.has(String(story.id.value))) indexOf.set(String(story.id.value), story.index);
  const edges = facts.map((story) =>
    story.dependsOn.flatMap((dep, k) => {
      const target = indexOf.get(String(dep.value));
      if (target !== undefined) return [target];
      report(
        dep.offset,
        'unknown-dependency',
        `${story.label}: dependsOn names "${String(dep.value)}", which is not the id of any story`,
        `userStories[${story.index}].dependsOn[${k}]`,
      );
      return [];
    }),
  );
  for (const cycle of findCycles(edges)) reportCycle(cycle, facts, indexOf, report);
}

function reportCycle(cycle: number[], facts: StoryFacts[], indexOf: Map<string, number>, report: Report): void {
  const head = facts[cycle[0]];
  const k = head.dependsOn.findIndex((dep) => indexOf.get(String(dep.value)) === cycle[1]);
  const ids = cycle.map((i) => String(facts[i].id!.value));
  const message =
    cycle.length === 2
      ? `${head.label}: the story depends on itself`
      : `dependency cycle: ${ids.join(' -> ')} (each depends on the next)`;
  report(head.dependsOn[k].offset, 'cycle', message, `userStories[${head.index}].dependsOn[${k}]`);
}

// The path is a stack of keys and indexes, formatted only when a duplicate turns up: most plans have none.
function checkDuplicateKeys(node: JsonNode, path: (string | number)[], report: Report): void {
  if (node.kind === 'array') {
    for (let i = 0; i < node.items.length; i++) {
      path.push(i);
      checkDuplicateKeys(node.items[i], path, report);
      path.pop();
    }
  }
  if (node.kind !== 'object') return;
  const seen = new Set<string>();
  for (const entry of node.entries) {
    path.push(entry.key);
    if (seen.has(entry.key)) {
      const where = formatPath(path);
      report(
        entry.keyOffset,
        'duplicate-key',
        `duplicate key "${where}"; JSON keeps only the last one, so remove the other`,
        where,
      );
    }
    seen.add(entry.key);
    checkDuplicateKeys(entry.value, path, report);
    path.pop();
  }
}

function formatPath(path: (string | number)[]): string {
  return path.map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? part : `.${part}`)).join('');
}

function sortProblems(problems: PrdProblem[]): PrdProblem[] {
  return problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.col ?? 0) - (b.col ?? 0));
}

/** One problem as a line editors and CI annotations understand: `file:line:col: message`. */
export function formatPrdProblem(problem: PrdProblem): string {
  if (problem.line === undefined) return `${problem.file}: ${problem.message}`;
  return `${problem.file}:${problem.line}:${problem.col ?? 1}: ${problem.message}`;
}

/** A warning the same way, marked as one (`file:line:col: warning: message`, as compilers print them). */
export function formatPrdWarning(warning: PrdProblem): string {
  return formatPrdProblem({ ...warning, message: `warning: ${warning.message}` });
}
