// The only module that imports kleur. Colours are named by use; everything goes to stderr
// except `out` and `json`, which are the command's result on stdout. Messages (success, warn, error, hint) can quote
// a plan, a loop's state or an agent's words, so their text is made safe for the terminal here; `out` and `info`
// print what the caller built and styled (its callers sanitize what they quote: the status table, validate's lines).
import kleur from 'kleur';
import { renderTerminalJson, sanitizeForTerminal } from './util/ansi.js';

export const color = {
  error: (s: string) => kleur.red(s),
  warn: (s: string) => kleur.yellow(s),
  info: (s: string) => kleur.cyan(s),
  success: (s: string) => kleur.green(s),
  dim: (s: string) => kleur.dim(s),
  bold: (s: string) => kleur.bold(s),
};

export const logger = {
  out(text: string) {
    process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  },
  /** A document on stdout, with every character a terminal could act on escaped (still the same JSON). */
  json(value: unknown) {
    process.stdout.write(`${renderTerminalJson(value, 2)}\n`);
  },
  info(text: string) {
    process.stderr.write(`${text}\n`);
  },
  success(text: string) {
    process.stderr.write(`${color.success(sanitizeForTerminal(text))}\n`);
  },
  warn(text: string) {
    process.stderr.write(`${color.warn('warning:')} ${sanitizeForTerminal(text)}\n`);
  },
  error(text: string) {
    process.stderr.write(`${color.error('error:')} ${sanitizeForTerminal(text)}\n`);
  },
  hint(text: string) {
    process.stderr.write(`${color.dim('hint:')} ${sanitizeForTerminal(text)}\n`);
  },
};
