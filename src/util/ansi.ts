// Terminal safety for text that comes from an agent, a check or a plan. An agent can print (or write into a plan,
// a state file or a story title) escape sequences a terminal acts on: OSC 52 writes the clipboard, CSI moves the
// cursor and rewrites lines, a carriage return or a bidi override makes one text read as another. What reaches the
// terminal goes through `sanitizeForTerminal` at the printing edges (the engine's io, the CLI's logger, the status
// table, validate's lines); files keep the bytes. Built-ins only (the engine bundles it).
import { stripVTControlCharacters } from 'node:util';

/** Escape sequences removed from what an agent or a check printed, before the runner quotes it in a log or a note. */
export function stripAnsi(text: string): string {
  return stripVTControlCharacters(text);
}

// Whole sequences first, so their parameters do not survive as text: OSC and the other string controls (DCS, SOS,
// PM, APC; 7-bit ESC forms and 8-bit C1 forms) up to BEL or ST, then CSI, then any other ESC sequence.
const SEQUENCES = new RegExp(
  [
    '(?:\\x1b[\\]PX^_]|[\\x90\\x98\\x9d\\x9e\\x9f])[^\\x07\\x1b\\x9c]*(?:\\x07|\\x1b\\\\|\\x9c)',
    '(?:\\x1b\\[|\\x9b)[\\x30-\\x3f]*[\\x20-\\x2f]*[\\x40-\\x7e]',
    '\\x1b[\\x20-\\x2f]*[\\x30-\\x7e]',
  ].join('|'),
  'g',
);
// Then every control character left (C0 but tab and newline, DEL, C1, a lone ESC of an unterminated sequence), and
// the invisible marks that reorder text (bidi embeddings, overrides, isolates, LRM/RLM/ALM).
/** The marks that reorder text, as a character-class body: ALM, LRM, RLM, bidi embeddings, overrides, isolates. */
export const BIDI_CONTROLS = '\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069';
const CONTROL_CLASS = `[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f${BIDI_CONTROLS}]`;
const CONTROLS = new RegExp(CONTROL_CLASS, 'g');
const ANY_UNSAFE = new RegExp(CONTROL_CLASS);

/**
 * `text` as a terminal may show it: escape sequences, control characters and bidi controls removed; tabs and
 * newlines kept (CRLF becomes LF; a lone CR, which would let a line overwrite itself, is removed). Text without any
 * of them is returned as it is.
 */
export function sanitizeForTerminal(text: string): string {
  if (!ANY_UNSAFE.test(text)) return text;
  return text.replace(/\r\n/g, '\n').replace(SEQUENCES, '').replace(CONTROLS, '');
}

// JSON.stringify escapes C0 but leaves DEL, C1 and the bidi controls raw; as \u escapes they mean the same to a parser.
const JSON_RAW = new RegExp(`[\\x7f-\\x9f${BIDI_CONTROLS}\\u2028\\u2029]`, 'g');

/** JSON for a terminal or a pipe: the same document, with every character a terminal could act on escaped. */
export function renderTerminalJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(
    JSON_RAW,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
