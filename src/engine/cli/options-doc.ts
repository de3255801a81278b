// The loop's part of docs/options.md, rendered from the runner's own sources: the options and their descriptions
// from --help (help.ts), each default from DEFAULT_OPTIONS (args.ts), the exit codes from LOOP_EXIT (errors.ts).
// Rendering refuses when help.ts and args.ts disagree (an option one has and the other lacks), so the page cannot
// drift from either.
// `npm run docs:options` writes the page (src/options-doc.ts); test/unit/options-doc.test.ts fails when it is stale.
import { DEFAULT_OPTIONS, RUN_FLAGS, RUN_OPTION_KEYS } from './args.js';
import { renderRunHelp } from './help.js';
import { LOOP_EXIT } from '../errors.js';

/** The column where help.ts starts each description. */
const DESCRIPTION_COLUMN = 30;

interface Row {
  flags: string[];
  argument: string;
  text: string;
}

interface Section {
  title: string;
  intro: string;
  rows: Row[];
}

/** The runner's part of docs/options.md (src/options-doc.ts puts the page together): its options, exit codes and environment. */
export function renderRunOptionsDoc(): string[] {
  const help = renderRunHelp({
    ralphkit: (args) => `npx ralphkit ${args}`,
    loop: (args) => `./ralph/ralph.sh ${args}`,
  });
  const sections = parseOptionSections(between(help, '\nAgent:\n', '\nDurations:'));
  checkAgreement(sections);
  return [
    '## The loop: `./ralph/ralph.sh`',
    '',
    '`./ralph/ralph.sh [options] [max_iterations]` (the same as `node ralph/ralph.mjs run` and `ralphkit run`).',
    `\`max_iterations\` defaults to ${DEFAULT_OPTIONS.maxIterations}; 0 means no cap, and then needs \`--max-cost\`, \`--max-usage\` or \`--max-duration\`.`,
    `${line(help, /^Durations: .*$/m)} \`./ralph/ralph.sh --help\` lists the same options.`,
    '',
    ...sections.flatMap(renderSection),
    ...renderExitCodes(help),
    ...renderEnvironment(help),
  ];
}

function between(text: string, start: string, end: string): string {
  const from = text.indexOf(start);
  const to = text.indexOf(end, from);
  if (from < 0 || to < 0) throw new Error(`the runner's help has no "${start.trim()}" … "${end.trim()}" part`);
  return text.slice(from + 1, to);
}

function line(text: string, pattern: RegExp): string {
  const m = pattern.exec(text);
  if (!m) throw new Error(`the runner's help has no line matching ${pattern}`);
  return m[0];
}

/** Headings start at column 0 (and may run over several lines); options at 2; their text at DESCRIPTION_COLUMN. */
export function parseOptionSections(text: string): Section[] {
  const sections: Section[] = [];
  let heading: string[] = [];
  for (const raw of text.split('\n')) {
    if (!raw.trim()) continue;
    if (!raw.startsWith(' ')) {
      heading.push(raw);
      continue;
    }
    if (heading.length) sections.push({ ...splitHeading(heading.join(' ')), rows: [] });
    heading = [];
    const rows = sections.at(-1)!.rows;
    if (raw.startsWith('  -')) rows.push(parseOptionLine(raw));
    else rows.at(-1)!.text += ` ${raw.trim()}`;
  }
  return sections;
}

function splitHeading(heading: string): { title: string; intro: string } {
  const m = /^([A-Z][\w ]*?)(?:[ ,]+\(?(.*?)\)?)?:$/.exec(heading.trim());
  if (!m) throw new Error(`unexpected heading in the runner's help: ${heading}`);
  return { title: m[1], intro: m[2] ?? '' };
}

function parseOptionLine(raw: string): Row {
  const left = raw.slice(2, DESCRIPTION_COLUMN).trim();
  const flags = left.split(/,? /).filter((w) => w.startsWith('-'));
  const argument = left
    .split(' ')
    .filter((w) => !w.startsWith('-') && w)
    .join(' ');
  return { flags, argument, text: raw.slice(DESCRIPTION_COLUMN).trim() };
}

/** Every option in args.ts is in the help (its own row or named in one), and every row is an option args.ts has. */
export function checkAgreement(sections: Section[]): void {
  const rows = sections.flatMap((s) => s.rows);
  const longs = rows.flatMap((r) => r.flags.filter((f) => f.startsWith('--')).map((f) => f.slice(2)));
  const unknown = longs.filter((f) => !RUN_FLAGS().includes(f));
  if (unknown.length) throw new Error(`help.ts lists options args.ts does not accept: --${unknown.join(', --')}`);
  const everything = rows.map((r) => `${r.flags.join(' ')} ${r.text}`).join(' ');
  const missing = RUN_FLAGS().filter((f) => !new RegExp(`--${f}(?![\\w-])`).test(everything));
  if (missing.length) throw new Error(`args.ts accepts options help.ts does not describe: --${missing.join(', --')}`);
}

function renderSection(section: Section): string[] {
  return [
    `### ${section.title}`,
    '',
    ...(section.intro ? [`${sentence(section.intro)}`, ''] : []),
    '| option | argument | default | what it does |',
    '|---|---|---|---|',
    ...section.rows.map(
      (r) =>
        `| ${r.flags.map((f) => `\`${f}\``).join(', ')} | ${r.argument ? `\`${cell(r.argument)}\`` : ''} | ${defaultOf(r)} | ${cell(markup(r.text))} |`,
    ),
    '',
  ];
}

function sentence(text: string): string {
  const s = markup(text);
  return `${s[0].toUpperCase()}${s.slice(1)}${/[.)]$/.test(s) ? '' : '.'}`;
}

/** The value the option sets when it is not given, from DEFAULT_OPTIONS; a switch is off. */
export function defaultOf(row: Row): string {
  const flag = row.flags.find((f) => f.startsWith('--'))!.slice(2);
  // A switch is off, but for one whose own option is on by default (--sandbox, --no-sandbox: where bwrap works).
  if (!row.argument)
    return DEFAULT_OPTIONS[RUN_OPTION_KEYS[flag]] === true && !flag.startsWith('no-') ? 'on where it works' : 'off';
  const value = DEFAULT_OPTIONS[RUN_OPTION_KEYS[flag]];
  if (value === undefined) return noDefault(row.text);
  if (typeof value === 'number' && RUN_OPTION_KEYS[flag].endsWith('Ms')) return `\`${duration(value)}\``;
  return `\`${String(value)}\``;
}

/** No value of its own: blank when the text says what happens instead ("default: generated from the time"). */
export function noDefault(text: string): string {
  return /\(default[: ]/.test(text) ? '' : 'none';
}

/** Milliseconds the way the help writes them: 60m, 2s, 500ms. */
function duration(ms: number): string {
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/** Tags such as <promise>WORD</promise> and <id> as code, so markdown shows them rather than taking them for HTML. */
export function markup(text: string): string {
  return text.replace(/[\w./-]*<[^<>]+>(?:[\w./-]*<\/?[^<>]+>)*[\w./-]*/g, (m) => `\`${m}\``);
}

export function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

/** The help's exit codes, each with its name in LOOP_EXIT; refused when the two lists differ. */
function renderExitCodes(help: string): string[] {
  const codes = indentedList(between(help, '\nExit codes:\n', '\nEnvironment:'), 7, /^ {2}(\d+) +(.*)$/);
  const names = Object.fromEntries(Object.entries(LOOP_EXIT).map(([name, code]) => [String(code), name]));
  const listed = codes.map(([code]) => Number(code));
  if (listed.join() !== Object.values(LOOP_EXIT).join())
    throw new Error(
      `help.ts lists exit codes ${listed.join(', ')}; errors.ts LOOP_EXIT has ${Object.values(LOOP_EXIT).join(', ')}`,
    );
  return [
    '## Exit codes',
    '',
    '| code | name in the code | meaning |',
    '|---|---|---|',
    ...codes.map(([code, text]) => `| ${code} | \`${names[code]}\` | ${cell(markup(text))} |`),
    '',
  ];
}

function renderEnvironment(help: string): string[] {
  const vars = indentedList(
    between(help, '\nEnvironment:\n', '\nRuntime files:'),
    DESCRIPTION_COLUMN,
    /^ {2}(\S+) +(.*)$/,
  );
  return [
    '## Environment',
    '',
    '| variable | what it does |',
    '|---|---|',
    ...vars.map(([name, text]) => `| \`${name}\` | ${cell(markup(text))} |`),
    '',
  ];
}

/** `  KEY   text` lines, each continued by lines indented `indent` spaces: [key, the text joined]. */
function indentedList(text: string, indent: number, first: RegExp): [string, string][] {
  const items: [string, string][] = [];
  for (const raw of text.split('\n').slice(1)) {
    const m = first.exec(raw);
    if (m) items.push([m[1], m[2].trim()]);
    else if (raw.startsWith(' '.repeat(indent)) && items.length) items.at(-1)![1] += ` ${raw.trim()}`;
  }
  return items;
}
