// The only module that imports prompts, and only when there is a question to ask: a command that
// never prompts does not load it.
import type promptsType from 'prompts';

export interface Choice<T extends string> {
  title: string;
  value: T;
  description?: string;
}

/** Prompts are allowed only when a person can answer: both ends are terminals, and neither --yes nor --json was given. */
export function canPrompt(opts: { stdinTTY: boolean; stdoutTTY: boolean; yes?: boolean; json?: boolean }): boolean {
  return opts.stdinTTY && opts.stdoutTTY && !opts.yes && !opts.json;
}

export function terminalCanPrompt(opts: { yes?: boolean; json?: boolean }): boolean {
  return canPrompt({ stdinTTY: Boolean(process.stdin.isTTY), stdoutTTY: Boolean(process.stdout.isTTY), ...opts });
}

/** Ask the user to pick one choice; undefined when they cancel (Ctrl-C or Esc). */
export async function select<T extends string>(message: string, choices: Choice<T>[]): Promise<T | undefined> {
  let cancelled = false;
  // prompts' entry picks dist/ (for Node < 8.6) or lib/ at run time, so a bundler ships both;
  // importing lib/ directly keeps the second copy (~75 KB) out of dist/.
  // @ts-expect-error the subpath has no type declarations; the types come from 'prompts' above.
  const prompts = (await import('prompts/lib/index.js')).default as typeof promptsType;
  const answer = await prompts(
    { type: 'select', name: 'value', message, choices, initial: 0 },
    {
      onCancel: () => {
        cancelled = true;
      },
    },
  );
  return cancelled ? undefined : (answer.value as T | undefined);
}
