// `ralphkit skill add`: its options and help; the action (src/commands/skill-action.ts) is loaded when it runs.
import type { Command } from 'commander';
import { addFileCommandOptions, type FileCommandFlags } from './install.js';
import { renderExamples } from '../util/invocation.js';

export const SKILL_ADD_HELP = `
Missing frontmatter is filled in: name from the file name in kebab-case, accents
dropped ("My Review Notes.md" → my-review-notes, "Résumé helper.md" → resume-helper),
description from the first "# " heading.
Fields already there are kept. The result must pass the Agent Skills rules, or the
file is refused with the reason (exit 2):
  name         1-64 of a-z 0-9 -, no leading, trailing or double hyphen
  description  1-1024 characters, no < or >
  other keys   license, allowed-tools, metadata, compatibility; in .claude/skills/
               also Claude Code's own (user-invocable, disable-model-invocation,
               argument-hint, model, effort, context, agent, hooks, paths, ...)

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
  const add = skill
    .command('add')
    .summary('install markdown files as skills (.claude/skills/<name>/SKILL.md)')
    .description('Install markdown files as agent skills: <skills folder>/<name>/SKILL.md for each --agent.')
    .argument('<files...>', 'markdown files to install');
  addFileCommandOptions(add, 'back up installed skills you edited and replace them')
    .addHelpText('after', () => renderExamples(SKILL_ADD_HELP))
    .exitOverride()
    .action(async (files: string[], flags: FileCommandFlags) =>
      (await import('./skill-action.js')).skillAddAction(files, flags),
    );
}
