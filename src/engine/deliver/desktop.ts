// --notify: one desktop notification when the loop ends, through the system's own program: notify-send (libnotify)
// on Linux and the BSDs, osascript's `display notification` on macOS. Started with an argument list, never a shell;
// bounded in time; a failure is one warning.
import { execFile } from 'node:child_process';
import { endProgram, type EndProgram } from './programs.js';
import { firstLine } from './summary.js';

/** How long the notification program may take before it is killed. */
export const DESKTOP_TIMEOUT_MS = 10_000;

export interface DesktopCommand {
  file: string;
  args: string[];
}

/** Pure: the command that shows `title` and `body` on `platform`, or null when its program is not on PATH. */
export function planDesktopNotification(
  platform: NodeJS.Platform,
  title: string,
  body: string,
  find: (name: string) => string | null,
): DesktopCommand | null {
  if (platform === 'darwin') {
    const file = find('osascript');
    // osascript -e takes AppleScript source: the texts go in as string literals, escaped as the language requires.
    return file
      ? { file, args: ['-e', `display notification ${appleScriptString(body)} with title ${appleScriptString(title)}`] }
      : null;
  }
  const file = find('notify-send');
  // notify-send [OPTIONS] {summary} [body]: both texts begin with a letter, so neither can be read as an option.
  return file ? { file, args: [title, body] } : null;
}

/** An AppleScript string literal: backslash and double quote escaped, control characters as spaces. */
export function appleScriptString(text: string): string {
  return `"${text.replace(/[\x00-\x1f\x7f]/g, ' ').replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** Shows the notification; resolves in at most DESKTOP_TIMEOUT_MS, never rejects, warns once when it cannot. */
export function showDesktopNotification(
  title: string,
  body: string,
  env: NodeJS.ProcessEnv,
  signal: AbortSignal,
  warn: (message: string) => void,
): Promise<void> {
  const command = planDesktopNotification(process.platform, title, body, (name) => endProgram(name as EndProgram, env));
  if (!command) {
    warn(
      `--notify: ${process.platform === 'darwin' ? 'osascript' : 'notify-send'} was not found on PATH, so no desktop notification was shown${process.platform === 'darwin' ? '' : ' (it comes with libnotify: apt-get install libnotify-bin, dnf install libnotify)'}`,
    );
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const options = {
      env,
      timeout: DESKTOP_TIMEOUT_MS,
      killSignal: 'SIGKILL' as const,
      maxBuffer: 64 * 1024,
      signal,
      windowsHide: true,
    };
    execFile(command.file, command.args, options, (err, _stdout, stderr) => {
      if (err) {
        const why = (err as { killed?: boolean }).killed
          ? `gave no answer within ${DESKTOP_TIMEOUT_MS / 1000}s and was stopped`
          : `failed: ${firstLine(String(stderr)) || err.message}`;
        warn(`--notify: ${command.file} ${why}`);
      }
      resolve();
    });
  });
}
