// `ralphkit install`: parses options and calls runInstall; printing is in src/install/report.ts.
import type { Command } from 'commander';
import { runInstall } from '../install/run.js';
import { askAtTerminal, printResult, withJsonErrors } from '../install/report.js';
import { logger } from '../logger.js';
import { parseAgents, type AgentName } from '../skills/agents.js';
import { terminalCanPrompt } from '../util/prompt.js';
import { topFolders } from '../util/top-folders.js';

/** The options `install` and `skill add` share (both write files through the same plan), as commander parses them. */
export interface FileCommandFlags {
  cwd?: string;
  force?: boolean;
  dryRun?: boolean;
  diff?: boolean;
  json?: boolean;
  yes?: boolean;
  agent: string;
}

interface InstallFlags extends FileCommandFlags {
  skills: boolean;
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
    .option('--agent <list>', 'skill folders, comma-separated: claude (.claude/skills), agents (.agents/skills)', 'claude');
}

/** What the shared flags mean to runInstall and runSkillAdd. Call it inside withJsonErrors: a bad --agent throws. */
export function fileCommandOptions(flags: FileCommandFlags) {
  return {
    cwd: flags.cwd ?? process.cwd(),
    agents: parseAgents(flags.agent),
    force: flags.force,
    // --diff shows what would change, so it never writes.
    dryRun: flags.dryRun || flags.diff,
    diff: flags.diff,
    ask: terminalCanPrompt(flags) ? askAtTerminal : undefined,
  };
}

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
  skip-state  ralph/prompt.md, prd.json, progress.txt are yours once created: never touched,
              not even with --force

Examples:
  $ npx ralphkit install                         install into the current repository
  $ npx ralphkit install --dry-run --diff        preview an upgrade, with diffs
  $ npx ralphkit@latest install --force          upgrade; your edited files are backed up
  $ npx ralphkit install --agent claude,agents   skills for Claude Code and for Codex & co.
  $ npx ralphkit install --cwd ../app --json     install elsewhere, machine-readable

Exit codes: 0 done or nothing to do · 1 error or bad usage · 2 refused (conflict, unsafe
path, invalid input): nothing was changed.`;

export function register(program: Command): void {
  const install = program
    .command('install')
    .summary('put the Ralph loop (ralph/ and the prd and ralph skills) into a repository')
    .description(
      'Put the Ralph loop into a repository: ralph/ralph.sh (the runner), ralph/ralph.mjs (the engine), ' +
        'ralph/prompt.md, prd.json and progress.txt (yours to edit), and the prd and ralph skills. ' +
        'Run it again to upgrade: files you never edited are replaced, files you edited are not.',
    );
  addFileCommandOptions(install, "back up managed files you edited and install ralphkit's versions")
    .option('--no-skills', 'install ralph/ only, without the prd and ralph skills')
    .addHelpText('after', INSTALL_HELP)
    .action(async (flags: InstallFlags) => {
      const result = await withJsonErrors(flags.json, 'install', () =>
        runInstall({
          ...fileCommandOptions(flags),
          skills: flags.skills,
          pauseAfterWrites: Number(process.env.RALPHKIT_TEST_PAUSE_AFTER_WRITES) || undefined,
        }),
      );
      printResult(result, { command: 'install', json: flags.json });
      if (!flags.json && result.status === 'written' && result.plan.items.some((i) => i.path === 'ralph/ralph.sh' && i.action === 'create')) {
        printNextSteps(flags.skills ? parseAgents(flags.agent) : [], result.plan.items.map((i) => i.path));
      }
    });
}

// Skills only in .agents/skills mean the user works in Codex (or another agent reading that layout), not Claude Code.
function printNextSteps(skillAgents: readonly AgentName[], written: string[]): void {
  const codex = skillAgents.length > 0 && !skillAgents.includes('claude');
  const where = codex ? 'in Codex (or another agent that reads .agents/skills)' : 'in Claude Code';
  const plan = skillAgents.length
    ? `${where}, ask for a PRD ("use the prd skill"), then turn it into ralph/prd.json ("use the ralph skill")`
    : 'write your plan into ralph/prd.json (the installed one is an example)';
  const start = codex ? './ralph/ralph.sh --agent codex 10' : './ralph/ralph.sh 10';
  // The loop refuses to start with uncommitted work, so name every top folder install wrote.
  logger.out(
    `\nNext:\n  1. ${plan}\n  2. npx ralphkit validate\n  3. git add ${topFolders(written).join(' ')} && git commit -m "Add the Ralph loop"` +
      `      (with your PRD; the loop starts from a clean tree)\n  4. ${start}`,
  );
}
