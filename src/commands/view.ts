// `ralphkit view`: its options; the dashboard server (src/commands/view-action.ts) is loaded when it runs.
import { InvalidArgumentError, type Command } from 'commander';

// The server's DEFAULT_PORT and DEFAULT_HOST (src/view/server.ts), repeated here so that declaring the
// options (for --help) does not load the server; test/unit/commands/view-defaults.test.ts keeps them equal.
export const VIEW_DEFAULT_PORT = 8089;
export const VIEW_DEFAULT_HOST = '127.0.0.1';

export interface ViewCommandOptions {
  port: number;
  host: string;
  cwd?: string;
  prd?: string;
  open?: boolean;
}

export function register(program: Command): void {
  program
    .command('view')
    .description('open a live dashboard of the plan, the progress log and the loops')
    .option('--port <port>', 'port to listen on (0 picks a free one)', parsePort, VIEW_DEFAULT_PORT)
    .option(
      '--host <host>',
      'address to bind; anything but 127.0.0.1 exposes the plan to your network',
      VIEW_DEFAULT_HOST,
    )
    .option('--cwd <dir>', 'a folder of the repository to show (default: the current folder)')
    .option('--prd <file>', 'the plan, relative to --cwd (default: ralph/prd.json at the top of the git repository)')
    .option('--open', 'open the dashboard in the default browser')
    .action(async (opts: ViewCommandOptions) => (await import('./view-action.js')).viewAction(opts));
}

export function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new InvalidArgumentError('expected a port number from 0 to 65535.');
  return port;
}
