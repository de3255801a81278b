// `ralphkit run` once commander has collected its arguments: the engine, with this package's dist/ralph.mjs to compare against.
import path from 'node:path';
import { ExitError } from '../errors.js';
import { runRalph } from '../engine/cli/command.js';
import { packageRoot } from '../paths.js';
import { sanitizeForTerminal } from '../util/ansi.js';

export async function runAction(args: string[]): Promise<void> {
  const code = await runRalph(args, {
    cwd: process.cwd(),
    env: process.env,
    packagedEngine: path.join(packageRoot(), 'dist', 'ralph.mjs'),
    // The engine's one way out: what it prints can quote the agent and the plan (src/util/ansi.ts).
    stdout: (s) => process.stdout.write(sanitizeForTerminal(s)),
    stderr: (s) => process.stderr.write(sanitizeForTerminal(s)),
  });
  if (code !== 0) throw new ExitError(code);
}
