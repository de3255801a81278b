// Terminal escape sequences (colours, cursor moves, OSC titles and hyperlinks) removed from text an agent or a
// check printed, before the runner quotes it in a log, a note or a message.
import { stripVTControlCharacters } from 'node:util';

export function stripAnsi(text: string): string {
  return stripVTControlCharacters(text);
}
