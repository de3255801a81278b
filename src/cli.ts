// The entry of the whole CLI (dist/cli.js): every command, run by src/program.ts.
import type { Command } from 'commander';
import { buildProgram as buildWith, main as mainWith, runAsEntry, type RegisterCommand } from './program.js';
import { register as registerInstall } from './commands/install.js';
import { register as registerSkill } from './commands/skill.js';
import { register as registerValidate } from './commands/validate.js';
import { register as registerRun } from './commands/run.js';
import { register as registerStatus } from './commands/status.js';
import { register as registerCancel } from './commands/cancel.js';
import { register as registerCleanup } from './commands/cleanup.js';
import { register as registerView } from './commands/view.js';

/** Every command, in the order `--help` lists them. */
const COMMANDS: readonly RegisterCommand[] = [
  registerInstall,
  registerSkill,
  registerValidate,
  registerRun,
  registerStatus,
  registerCancel,
  registerCleanup,
  registerView,
];

export function buildProgram(): Command {
  return buildWith(COMMANDS);
}

export function main(argv: string[]): Promise<number> {
  return mainWith(argv, COMMANDS);
}

runAsEntry(COMMANDS);
