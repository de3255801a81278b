// --deliver pr: the pull request's title and body, from the run (SPEC §10): each story with its verdict, the checks
// that decided it and at which commit, what was rejected along the way, and the changes to pinned test files. Pure.
// The verdicts come from the runner's ledger; "verified" is shown only when the plan on the branch agrees, since
// both the ledger and the plan sit where the agent can write and a forged line alone must not read as proof.
import type { Prd, Story } from '../../prd/types.js';
import { isSkipped } from '../../prd/skip.js';
import { summariseLedger, type CheckLine, type LedgerLine, type VerdictLine } from '../store/ledger.js';

export interface PrBodyInput {
  loopId: string;
  prd: Prd;
  ledger: readonly LedgerLine[];
  /** `git diff --name-status` lines of pinned files the branch changed; null: not known. */
  pinnedChanges: string[] | null;
  /** What the loop's own commits changed of its pins since its plan commit (the runner's record); null: not known. */
  loopPins?: { commit: string; changes: string[] } | null;
  /** CI configuration files the branch changed since its base (`M .github/workflows/ci.yml`); null or absent: none known. */
  ciChanges?: string[] | null;
}

/** The title: the plan's project (and description), else its branch. */
export function renderPrTitle(prd: Prd): string {
  const project = oneLine(typeof prd.project === 'string' ? prd.project : '');
  const description = oneLine(typeof prd.description === 'string' ? prd.description : '');
  const title =
    project && description ? `${project}: ${description}` : project || description || `ralph: ${prd.branchName}`;
  return title.length > 200 ? `${title.slice(0, 199)}…` : title;
}

export function renderPrBody(input: PrBodyInput): string {
  const { prd, ledger } = input;
  const summary = summariseLedger(ledger);
  const stories = prd.userStories.filter((s) => s && typeof s === 'object' && !isSkipped(s));
  const verified = stories.filter((s) => shownStatus(s, summary.stories[s.id]?.status) === 'verified').length;
  const out = [
    `Opened by a ralphkit loop (${code(input.loopId)}) on ${code(oneLine(prd.branchName))}: **${verified}/${stories.length} stories verified** by the runner's own checks.`,
    '',
    '## Stories',
    ...stories.flatMap((s) => renderStory(s, ledger, summary.stories[s.id]?.status)),
  ];
  const aside = prd.userStories.filter((s) => s && typeof s === 'object' && isSkipped(s));
  if (aside.length) out.push('', `Set aside by the plan (not worked on): ${aside.map((s) => code(s.id)).join(', ')}`);
  out.push('', '## Pinned test files', ...renderPinned(input.pinnedChanges), ...renderLoopPins(input.loopPins));
  if (input.ciChanges?.length) {
    out.push(
      '',
      '## CI configuration',
      "The branch changes what decides the repository's checks, so a pass of them proves less; `--deliver pr-merge` does not merge this pull request:",
      ...input.ciChanges.slice(0, 100).map((c) => `- ${code(oneLine(c))}`),
    );
  }
  out.push('', `The evidence is in \`ralph/.runs/${input.loopId}/ledger.jsonl\`.`);
  return out.join('\n');
}

// A ledger verdict of "verified" that the plan does not back (passes not true) is shown as unverified.
function shownStatus(story: Story, status: string | undefined): string {
  if (status === 'verified' && story.passes !== true) return 'unverified';
  return status ?? 'not verified yet';
}

function renderStory(story: Story, ledger: readonly LedgerLine[], status: string | undefined): string[] {
  const verdicts = ledger.filter((l): l is VerdictLine => l.kind === 'verdict' && l.story === story.id);
  const last = verdicts.at(-1);
  const shown = shownStatus(story, status);
  const head = `- ${code(story.id)} ${escapeText(oneLine(story.title))}: **${shown}**${last?.commit ? ` at ${last.commit.slice(0, 12)}` : ''}`;
  const lines = [head];
  if (last?.reason && shown !== 'verified') lines.push(`  - ${escapeText(oneLine(last.reason).slice(0, 300))}`);
  for (const c of decidingChecks(ledger, last))
    lines.push(
      `  - check ${code(oneLine(c.command).slice(0, 200))}: ${c.timedOut ? 'timed out' : c.exitCode === 0 ? 'passed' : `exit ${c.exitCode ?? c.signal}`}`,
    );
  const rejected = verdicts.slice(0, -1).filter((v) => v.status === 'rejected');
  if (rejected.length) {
    const why = rejected.at(-1)?.reason
      ? `; the last: ${escapeText(oneLine(rejected.at(-1)!.reason!).slice(0, 200))}`
      : '';
    lines.push(`  - rejected ${rejected.length} time${rejected.length === 1 ? '' : 's'} along the way${why}`);
  }
  return lines;
}

// The checks behind a verdict: its story's, run in its iteration on its commit, each command once.
function decidingChecks(ledger: readonly LedgerLine[], verdict: VerdictLine | undefined): CheckLine[] {
  if (!verdict) return [];
  const seen = new Map<string, CheckLine>();
  for (const l of ledger) {
    if (
      l.kind !== 'check' ||
      l.aborted ||
      l.story !== verdict.story ||
      l.loop !== verdict.loop ||
      l.iteration !== verdict.iteration ||
      l.commit !== verdict.commit
    )
      continue;
    seen.set(l.command, l);
  }
  return [...seen.values()];
}

function renderPinned(changes: string[] | null): string[] {
  if (changes === null)
    return ["Not known: the base branch is not in this repository, so the branch's changes could not be listed."];
  if (!changes.length) return ['None: the branch changes no pinned test file.'];
  return [
    'The branch changes these pinned files (review them before merging):',
    ...changes.slice(0, 100).map((c) => `- ${code(oneLine(c))}`),
  ];
}

function renderLoopPins(pins: PrBodyInput['loopPins']): string[] {
  if (!pins?.changes.length) return [];
  const head = `Changed by the loop since its plan commit ${code(pins.commit.slice(0, 12))} (the checks ran with the plan commit's versions, so these changes were never what passed; \`--deliver pr-merge\` does not merge this pull request):`;
  return ['', head, ...pins.changes.slice(0, 100).map((c) => `- ${code(oneLine(c))}`)];
}

function oneLine(text: unknown): string {
  return String(text ?? '')
    .replace(/[\u0000-\u001f\u007f]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** A Markdown code span that holds any text, backticks included. */
function code(value: unknown): string {
  const text = String(value);
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((r) => r.length));
  const fence = '`'.repeat(longest + 1);
  return longest ? `${fence} ${text} ${fence}` : `${fence}${text}${fence}`;
}

// Text from the plan or a reason: no HTML, mentions or Markdown links take effect in the body.
function escapeText(text: string): string {
  return text.replace(/[\\`*_[\]<>#|@!]/g, (c) => `\\${c}`);
}
