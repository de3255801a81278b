// Entry of dist/ralph.mjs (installed as ralph/ralph.mjs, started by ralph/ralph.sh):
//   ralph.mjs run [options] [max_iterations] · ralph.mjs status [--json] · ralph.mjs cancel <id>
// It sets process.exitCode and never calls process.exit, so pending writes (state, logs) always land.
import { runEngine } from './entry.js';

runEngine(process.argv.slice(2), {
  cwd: process.cwd(),
  env: process.env,
  stdout: (s) => process.stdout.write(s),
  stderr: (s) => process.stderr.write(s),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`ralph: unexpected error\n${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
