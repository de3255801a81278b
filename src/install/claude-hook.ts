// `install --claude-hook` / `--no-claude-hook`: what becomes of .claude/settings.json, as one merged file for the
// plan, and of the /ralph-loop command (a managed file, claude-command.ts); and the record the manifest keeps so a
// plain `install` keeps the hook current (SPEC §12).
import { lstatSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { RalphkitError, EXIT } from '../errors.js';
import { addStopHook, removeStopHook } from './claude-settings.js';
import type { ClaudeHookRecord, IncomingFile, Manifest } from './types.js';
import { ralphLoopCommandFile } from './claude-command.js';

export const CLAUDE_SETTINGS_PATH = '.claude/settings.json';

export interface ClaudeHookPlan {
  /** The settings file for the plan; none when nothing is asked of it. */
  files: IncomingFile[];
  /** For the next manifest: undefined keeps the previous record, null drops it. */
  record?: ClaudeHookRecord | null;
}

/**
 * `want`: true adds (or keeps current) the hook, false takes it out, undefined does what the manifest says: a
 * repository installed with the hook keeps it up to date, one without is left alone.
 */
export function planClaudeHook(
  root: string,
  want: boolean | undefined,
  manifest: Manifest | undefined,
): ClaudeHookPlan {
  const recorded = manifest?.claudeHook;
  if (want === undefined && !recorded) return { files: [] };
  const file = path.join(root, CLAUDE_SETTINGS_PATH);
  const current = readSettings(file);
  if (want === false) {
    const command = ralphLoopCommandFile(true);
    if (current === undefined) return { files: [command], record: null };
    const next = removeStopHook(current, recorded ?? { added: 'entry' }, file);
    if (next === null)
      return {
        files: [
          merged(
            current,
            "ralphkit's Stop hook taken out; ralphkit had created the file, and nothing else is in it",
            true,
          ),
          command,
        ],
        record: null,
      };
    return { files: [merged(next, "ralphkit's Stop hook taken out; your settings kept"), command], record: null };
  }
  const { text, record } = addStopHook(current, file);
  const change = record ? 'added' : 'brought up to date';
  const reason =
    current === undefined
      ? "new: ralphkit's Stop hook for Claude Code"
      : `ralphkit's Stop hook ${change}; your settings kept`;
  // The /ralph-loop command goes with the hook: one starts the in-session loop, the other verifies its stops.
  return { files: [merged(text, reason), ralphLoopCommandFile()], record: record ?? recorded ?? { added: 'entry' } };
}

function merged(text: string, reason: string, remove = false): IncomingFile {
  return {
    path: CLAUDE_SETTINGS_PATH,
    class: 'merged',
    source: 'ralphkit',
    content: Buffer.from(text, 'utf8'),
    reason,
    remove,
  };
}

function readSettings(file: string): string | undefined {
  let stat;
  try {
    stat = lstatSync(file);
  } catch {
    return undefined;
  }
  // A symlink is left to the path check before any write (install/safety.ts), which refuses one leading outside.
  if (!stat.isFile() && !stat.isSymbolicLink()) {
    throw new RalphkitError(`${file} is not a file; nothing was written`, {
      exitCode: EXIT.refused,
      hint: 'move it out of the way, then run the same command again',
    });
  }
  return readFileSync(file, 'utf8');
}
