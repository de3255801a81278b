// Entry of dist/ralph.mjs (installed as ralph/ralph.mjs, started by ralph/ralph.sh):
//   ralph.mjs run [options] [max_iterations] · ralph.mjs status [--json] · ralph.mjs cancel <id> · ralph.mjs cleanup
//   · ralph.mjs hook start|stop
// It sets process.exitCode and never calls process.exit, so pending writes (state, logs) always land.
import { runEngine } from './entry.js';
import { sanitizeForTerminal } from '../util/ansi.js';

// `ralph.mjs --help | head` closes the pipe early; that is the reader's choice, not an error of ours.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
}

// ralph.sh starts the engine without a NODE_OPTIONS that names the repository (Yarn's `--require <repo>/.pnp.cjs`, a
// file the agent can rewrite) and hands it over here: what the engine starts gets it as its rules for variables
// naming the repository say (verify/repo-env.ts); the engine's own process never loaded it.
if (process.env.RALPHKIT_NODE_OPTIONS !== undefined) {
  process.env.NODE_OPTIONS = process.env.RALPHKIT_NODE_OPTIONS;
  delete process.env.RALPHKIT_NODE_OPTIONS;
}

runEngine(process.argv.slice(2), {
  cwd: process.cwd(),
  env: process.env,
  // The engine's one way out: what it prints can quote the agent and the plan (src/util/ansi.ts).
  stdout: (s) => process.stdout.write(sanitizeForTerminal(s)),
  stderr: (s) => process.stderr.write(sanitizeForTerminal(s)),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(
      sanitizeForTerminal(
        `ralph: unexpected error\n${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      ),
    );
    process.exitCode = 1;
  },
);
