// What `ralphkit skill add` does once commander has parsed its arguments: runSkillAdd, then the report shared with install.
import { runSkillAdd } from '../install/skill-add.js';
import { printResult, withJsonErrors } from '../install/report.js';
import { fileCommandOptions, type FileCommandFlags } from './install.js';

export async function skillAddAction(files: string[], flags: FileCommandFlags): Promise<void> {
  const result = await withJsonErrors(flags.json, 'skill add', () =>
    runSkillAdd({
      ...fileCommandOptions(flags),
      // As typed, so messages name them the way the user did; they are read relative to this folder.
      files,
    }),
  );
  printResult(result, { command: 'skill add', json: flags.json }, { skills: result.skills });
}
