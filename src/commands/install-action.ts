// What `ralphkit install` does once commander has parsed its flags: runInstall, then the report (src/install/report.ts).
import { runInstall } from '../install/run.js';
import { printResult, withJsonErrors } from '../install/report.js';
import { logger } from '../logger.js';
import { parseAgents, type SkillAgent } from '../skills/agent-names.js';
import { topFolders } from '../util/top-folders.js';
import { fileCommandOptions, type InstallFlags } from './install.js';
import { ralphkitCommand } from '../util/invocation.js';
import { findGitRoot } from '../install/run.js';
import { renderCiNextSteps } from '../install/ci.js';

export async function installAction(flags: InstallFlags): Promise<void> {
  const result = await withJsonErrors(flags.json, 'install', () =>
    runInstall({
      ...fileCommandOptions(flags),
      skills: flags.skills,
      claudeHook: flags.claudeHook,
      ci: flags.ci,
      pauseAfterWrites: Number(process.env.RALPHKIT_TEST_PAUSE_AFTER_WRITES) || undefined,
      onWait: (holder) =>
        logger.info(
          `waiting for another ralphkit install${holder ? ` (pid ${holder.pid})` : ''} in this repository to finish`,
        ),
    }),
  );
  printResult(result, { command: 'install', json: flags.json });
  if (flags.json || result.status !== 'written') return;
  const created = (file: string) => result.plan.items.some((i) => i.path === file && i.action === 'create');
  const inGit = findGitRoot(result.cwd) !== undefined;
  if (created('ralph/ralph.sh'))
    printNextSteps(
      flags.skills ? parseAgents(flags.agent ?? 'claude') : [],
      result.plan.items.map((i) => i.path),
      inGit,
    );
  if (created('.github/workflows/ralph.yml')) logger.out(renderCiNextSteps(created('ralph/ralph.sh')));
}

// Skills only in .agents/skills mean the user works in Codex (or another agent reading that layout), not Claude Code.
function printNextSteps(skillAgents: readonly SkillAgent[], written: string[], inGit: boolean): void {
  const codex = skillAgents.length > 0 && !skillAgents.includes('claude');
  const where = codex ? 'in Codex (or another agent that reads .agents/skills)' : 'in Claude Code';
  const plan = skillAgents.length
    ? `${where}, ask for a PRD ("use the prd skill"), then turn it into ralph/prd.json ("use the ralph skill")`
    : 'write your plan into ralph/prd.json (the installed one is an example)';
  const start = codex ? './ralph/ralph.sh --agent codex 10' : './ralph/ralph.sh 10';
  // The loop refuses to start with uncommitted work, so name every top folder install wrote; outside git, the
  // loop's repository is made first (the warning above says the loop needs one).
  const commit = `git add ${topFolders(written).join(' ')} && git commit -m "Add the Ralph loop"`;
  const step3 = inGit
    ? `${commit}      (with your PRD; the loop starts from a clean tree)`
    : `git init && ${commit}      (the loop works in a git repository, from a clean tree)`;
  logger.out(`\nNext:\n  1. ${plan}\n  2. ${ralphkitCommand('validate')}\n  3. ${step3}\n  4. ${start}`);
}
