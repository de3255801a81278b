// `ralphkit install`: its options and help; the action (src/commands/install-action.ts) is loaded when it runs.
import { Option, type Command } from 'commander';
import type { AskConflict } from '../install/run-files.js';
import { parseAgents } from '../skills/agent-names.js';
import { terminalCanPrompt } from '../util/prompt.js';
import { renderExamples } from '../util/invocation.js';

/** The options `install` and `skill add` share (both write files through the same plan), as commander parses them. */
export interface FileCommandFlags {
  cwd?: string;
  force?: boolean;
  dryRun?: boolean;
  diff?: boolean;
  json?: boolean;
  yes?: boolean;
  /** undefined unless --agent was given: the manifest's record then decides (else claude). */
  agent?: string;
}

export interface InstallFlags extends FileCommandFlags {
  skills: boolean;
  /** undefined unless --claude-hook or --no-claude-hook was given. */
  claudeHook?: boolean;
  /** undefined unless --ci <provider> or --no-ci was given. */
  ci?: 'github' | false;
}

/** Declares the shared options in the order help lists them; only what --force does differs between the commands. */
export function addFileCommandOptions(command: Command, forceHelp: string): Command {
  return command
    .option('--cwd <dir>', 'repository to install into (default: the current folder)')
    .option('--force', forceHelp)
    .option('--dry-run', 'print the plan, write nothing')
    .option('--diff', 'print the plan with unified diffs of files that would change; writes nothing')
    .option('--json', 'print one JSON document on stdout (logs go to stderr)')
    .option('-y, --yes', 'never prompt: conflicts end with exit 2 unless --force')
    .option(
      '--agent <list>',
      'skill folders, comma-separated: claude (.claude/skills), agents (.agents/skills) (default: the folders the last install used, else claude)',
    );
}

/** What the shared flags mean to runInstall and runSkillAdd. Call it inside withJsonErrors: a bad --agent throws. */
export function fileCommandOptions(flags: FileCommandFlags) {
  return {
    cwd: flags.cwd ?? process.cwd(),
    agents: flags.agent === undefined ? undefined : parseAgents(flags.agent),
    force: flags.force,
    // --diff shows what would change, so it never writes.
    dryRun: flags.dryRun || flags.diff,
    diff: flags.diff,
    ask: terminalCanPrompt(flags) ? askAtTerminal : undefined,
  };
}

// The terminal prompt and its report module load only when there is a conflict to ask about.
const askAtTerminal: AskConflict = async (item, diff) =>
  (await import('../install/report.js')).askAtTerminal(item, diff);

export const INSTALL_HELP = `
What happens to each file:
  create      missing: written
  identical   already the same: left alone
  upgrade     unchanged since ralphkit installed it, and there is a new version: replaced
  fix-mode    up to date but no longer executable (ralph/ralph.sh): made executable again
  keep        you edited it, nothing new from ralphkit: left alone
  conflict    you edited it, and there is a new version: nothing at all is written (exit 2)
              unless you answer the prompt or pass --force
  overwrite   with --force: yours is copied to ralph/.backup/<time>/, then replaced
  skip-state  ralph/prompt.md, prd.json, progress.txt, review.md are yours once created: never
              touched, not even with --force
  merge       .claude/settings.json under --claude-hook or --no-claude-hook: only
              ralphkit's Stop hook entry goes in or out; the rest stays byte for byte
  remove      --no-claude-hook: .claude/settings.json goes when ralphkit created it
              and nothing else is in it. --no-claude-hook: .claude/commands/ralph-loop.md,
              --no-ci: .github/workflows/ralph.yml go when they are as installed
              (edited: a conflict, unless --force backs yours up first); folders
              left empty go too

Examples:
  $ npx ralphkit install                         install into the current repository
  $ npx ralphkit install --dry-run --diff        preview an upgrade, with diffs
  $ npx ralphkit@latest install --force          upgrade; your edited files are backed up
  $ npx ralphkit install --agent claude,agents   skills for Claude Code and for Codex & co.
  $ npx ralphkit install --cwd ../app --json     install elsewhere, machine-readable
  $ npx ralphkit install --claude-hook           also /ralph-loop and its Stop hook, for Claude Code
  $ npx ralphkit install --ci github             also the loop on GitHub Actions (.github/workflows/ralph.yml)
  $ npx ralphkit install --no-ci                 take that workflow out again

--claude-hook, --ci and --agent are recorded in ralph/.ralphkit.json: a plain install keeps them up to date.
The workflow needs repository secrets: README.md, "Loops on GitHub Actions".

Exit codes: 0 done or nothing to do · 1 error or bad usage · 2 refused (conflict, unsafe
path, invalid input): nothing was changed.`;

export function register(program: Command): void {
  const install = program
    .command('install')
    .summary('put the Ralph loop (ralph/ and the prd and ralph skills) into a repository')
    .description(
      'Put the Ralph loop into a repository: ralph/ralph.sh (the runner), ralph/ralph.mjs (the engine), ' +
        'ralph/prompt.md, prd.json, progress.txt and review.md (yours to edit), and the prd and ralph skills. ' +
        'Run it again to upgrade: files you never edited are replaced, files you edited are not.',
    );
  addFileCommandOptions(install, "back up managed files you edited and install ralphkit's versions")
    .option('--no-skills', 'install ralph/ only, without the prd and ralph skills')
    .option(
      '--claude-hook',
      "add the in-session loop for Claude Code: ralphkit's Stop hook in .claude/settings.json (your settings kept) and the /ralph-loop command (.claude/commands/ralph-loop.md); type /ralph-loop --max-iterations 5 in Claude Code to start it; later installs keep both current",
    )
    .option(
      '--no-claude-hook',
      "take ralphkit's Stop hook out of .claude/settings.json again (leaving the rest as it was) and remove /ralph-loop",
    )
    .addOption(
      new Option(
        '--ci <provider>',
        'also install .github/workflows/ralph.yml, the loop on GitHub Actions (manual runs, one job per plan, a pull request per plan); later installs keep it current',
      ).choices(['github']),
    )
    .option('--no-ci', 'take that workflow out again (kept, with a conflict, if you edited it)')
    .addHelpText('after', () => renderExamples(INSTALL_HELP))
    // The work (and what it imports) is loaded only when install runs, so `ralphkit --help` and other commands start without it.
    .action(async (flags: InstallFlags) => (await import('./install-action.js')).installAction(flags));
}
