// `ralphkit skill add`: parses options and calls runSkillAdd; printing is shared with install.
import type { Command } from 'commander';
import { runSkillAdd } from '../skills/add.js';
import { askAtTerminal, printResult, withJsonErrors } from '../install/report.js';
import { parseAgents } from '../skills/agents.js';
import { terminalCanPrompt } from '../util/prompt.js';

interface SkillAddFlags {
  cwd?: string;
  force?: boolean;
  dryRun?: boolean;
  diff?: boolean;
  json?: boolean;
  yes?: boolean;
  agent: string;
}

export const SKILL_ADD_HELP = `
Missing frontmatter is filled in: name from the file name in kebab-case, accents
dropped ("My Review Notes.md" → my-review-notes, "Ünïcode Nötes.md" → unicode-notes),
description from the first "# " heading.
Fields already there are kept. The result must pass the Agent Skills rules, or the
file is refused with the reason (exit 2):
  name         1-64 of a-z 0-9 -, no leading, trailing or double hyphen
  description  1-1024 characters, no < or >
  other keys   only license, allowed-tools, metadata, compatibility

An added skill is tracked in ralph/.ralphkit.json like ralphkit's own files: add it
again after editing the source and an untouched installed copy is upgraded, while
an installed copy you edited is a conflict (--force backs it up and replaces it).

Examples:
  $ npx ralphkit skill add docs/review.md               → .claude/skills/review/SKILL.md
  $ npx ralphkit skill add a.md b.md --agent agents     → .agents/skills/a/ and b/
  $ npx ralphkit skill add "My Review Notes.md" --dry-run`;

export function register(program: Command): void {
  const skill = program
    .command('skill')
    .summary('install your own markdown files as agent skills')
    .description('Manage agent skills in a repository.')
    .exitOverride();
  skill
    .command('add')
    .summary('install markdown files as skills (.claude/skills/<name>/SKILL.md)')
    .description('Install markdown files as agent skills: <skills folder>/<name>/SKILL.md for each --agent.')
    .argument('<files...>', 'markdown files to install')
    .option('--cwd <dir>', 'repository to install into (default: the current folder)')
    .option('--force', 'back up installed skills you edited and replace them')
    .option('--dry-run', 'print the plan, write nothing')
    .option('--diff', 'print the plan with unified diffs of files that would change; writes nothing')
    .option('--json', 'print one JSON document on stdout (logs go to stderr)')
    .option('-y, --yes', 'never prompt: conflicts end with exit 2 unless --force')
    .option('--agent <list>', 'skill folders, comma-separated: claude (.claude/skills), agents (.agents/skills)', 'claude')
    .addHelpText('after', SKILL_ADD_HELP)
    .exitOverride()
    .action(async (files: string[], flags: SkillAddFlags) => {
      const result = await withJsonErrors(flags.json, 'skill add', () =>
        runSkillAdd({
          cwd: flags.cwd ?? process.cwd(),
          // As typed, so messages name them the way the user did; they are read relative to this folder.
          files,
          agents: parseAgents(flags.agent),
          force: flags.force,
          dryRun: flags.dryRun || flags.diff,
          diff: flags.diff,
          ask: terminalCanPrompt(flags) ? askAtTerminal : undefined,
        }),
      );
      printResult(result, { command: 'skill add', json: flags.json }, { skills: result.skills });
    });
}
