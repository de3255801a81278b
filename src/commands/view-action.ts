// `ralphkit view` once commander has parsed it: starts the dashboard server and keeps it running until Ctrl-C.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { logger, color } from '../logger.js';
import { DEFAULT_HOST, startViewServer, type ViewServer } from '../view/server.js';
import { resolveCwdFolder, resolvePlanRoot } from '../cwd.js';
import type { ViewCommandOptions } from './view.js';

export async function viewAction(opts: ViewCommandOptions): Promise<void> {
  // A dashboard of a folder that is not there would wait forever for a plan that cannot appear.
  const folder = resolveCwdFolder(opts.cwd ?? process.cwd());
  // The repository's ralph/ as the loop writes it, from any subfolder; a plan named with --prd is where the user points.
  const cwd = await resolvePlanRoot(folder);
  const prd = opts.prd === undefined ? undefined : path.resolve(folder, opts.prd);
  const server = await startViewServer({ cwd, prd, port: opts.port, host: opts.host });
  printStarted(server, opts);
  if (opts.open) openBrowser(server.url);
  await untilInterrupted();
  await server.close();
}

function printStarted(server: ViewServer, opts: ViewCommandOptions): void {
  if (!existsSync(server.paths.prd))
    logger.warn(`no plan at ${server.paths.prd} yet; the page shows it once it exists (ralphkit install writes one)`);
  if (opts.host !== DEFAULT_HOST && opts.host !== 'localhost') {
    logger.warn(`listening on ${opts.host}: anyone who can reach this address can read your plan and progress log`);
  }
  logger.info(`${color.bold('ralphkit view')} ${color.dim('showing')} ${server.paths.cwd}`);
  logger.out(server.url);
  logger.info(color.dim('Ctrl-C stops it.'));
}

function untilInterrupted(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

// Best effort: the URL is printed either way, so a missing or failing opener is a warning, never an error.
function openBrowser(url: string): void {
  const [cmd, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', url]]
        : ['xdg-open', [url]];
  const cannot = (why: string) => logger.warn(`could not open a browser (${why}); open ${url} yourself`);
  try {
    const child = spawn(cmd as string, args as string[], { stdio: 'ignore', detached: true });
    child.on('error', (err: NodeJS.ErrnoException) => cannot(err.code === 'ENOENT' ? `${cmd} not found` : err.message));
    // xdg-open without a desktop (ssh, containers) exits non-zero rather than failing to start.
    child.on('exit', (code) => {
      if (code) cannot(`${cmd} exited with ${code}`);
    });
    child.unref();
  } catch (err) {
    cannot((err as Error).message);
  }
}
