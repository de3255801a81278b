// `ralphkit validate [file]`: its arguments and help; the check (src/commands/validate-action.ts) is loaded when it runs.
import type { Command } from 'commander';

export interface ValidateCommandOptions {
  cwd?: string;
  json?: boolean;
}

export function register(program: Command): void {
  program
    .command('validate')
    .description('check a prd.json plan and list every problem in it')
    .argument(
      '[file]',
      "the plan to check, relative to --cwd; a folder means its ralph/prd.json, scripts/ralph/prd.json or prd.json (default: ralph/prd.json at the top of the git repository, else the original layout's scripts/ralph/prd.json)",
    )
    .option(
      '--cwd <dir>',
      'the folder the file is relative to, and where the repository is looked for (default: the current folder)',
    )
    .option('--json', 'print one JSON document {file, valid, problems, warnings} on stdout')
    .addHelpText(
      'after',
      `
Problems go to stdout, one per line, as file:line:col: message (the form editors
and CI annotate); the count and a hint go to stderr. Warnings (file:line:col:
warning: message) do not make a plan invalid. A valid plan prints a summary.
Exit codes: 0 valid, 2 invalid or missing, 1 unexpected error.`,
    )
    .action(async (file: string | undefined, opts: ValidateCommandOptions) =>
      (await import('./validate-action.js')).validateAction(file, opts),
    );
}
