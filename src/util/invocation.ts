// How to type ralphkit again, for the hints it prints: the way this process was started, so that a hint
// works when pasted. `npx ralphkit` is right only for a ralphkit that npx fetched; one installed from a
// clone answers 404 there. Node built-ins only: the engine (ralph/ralph.mjs) prints hints too.
import path from 'node:path';
import { realpathOrUndefined } from './read.js';
import { shellQuote } from './shell-quote.js';
import { findExecutable } from './which.js';

/** What decides the command: the script node ran, the environment, and two file-system reads. */
export interface InvocationFacts {
  /** process.argv[1], the script node was started with. */
  script: string | undefined;
  platform: NodeJS.Platform;
  /** The real path of a file (symlinks resolved), or undefined when there is none. */
  realpath: (file: string) => string | undefined;
  /** The first executable `name` in a PATH folder the user's shell also has (not a node_modules/.bin). */
  which: (name: string) => string | undefined;
  /** `ralph.sh` when the installed launcher started the engine (it sets RALPHKIT_LAUNCHER). */
  launcher?: string;
}

export interface RalphkitCommands {
  /** Words that start the ralphkit CLI: `ralphkit`, `npx ralphkit` or `node /abs/bin/ralphkit.js`. */
  cli: string;
  /** Words that run the loop's own subcommands (validate, status, cancel): the installed engine's when it is the one running. */
  loop: string;
}

/** Pure: the commands to print in hints for a process started as `facts` describes. */
export function resolveCommands(facts: InvocationFacts): RalphkitCommands {
  const script = facts.script === undefined ? undefined : facts.realpath(facts.script);
  const onPath = facts.which('ralphkit');
  const linked = onPath !== undefined && facts.realpath(onPath) !== undefined;
  if (script === undefined) return both(linked ? 'ralphkit' : 'npx ralphkit');
  // The installed engine: its own subcommands need no ralphkit at all; validate and install do.
  if (path.basename(script) === 'ralph.mjs')
    return {
      cli: linked ? 'ralphkit' : 'npx ralphkit',
      loop: facts.launcher === 'ralph.sh' ? './ralph/ralph.sh' : 'node ralph/ralph.mjs',
    };
  const parts = script.split(/[\\/]/);
  // npx runs packages from its cache (`<cache>/_npx/<hash>/node_modules/...`), gone from PATH once it exits.
  if (parts.includes('_npx')) return both('npx ralphkit');
  if (linked && facts.realpath(onPath) === script) return both('ralphkit');
  // A project's own dependency (node_modules/ralphkit): npx finds it there.
  if (parts.includes('node_modules')) return both('npx ralphkit');
  return both(`node ${quoteArg(path.resolve(facts.script!), facts.platform)}`);
}

function both(command: string): RalphkitCommands {
  return { cli: command, loop: command };
}

/** `arg` as one shell word: bare when it is plain, else quoted for the platform's shell. */
export function quoteArg(arg: string, platform: NodeJS.Platform): string {
  if (platform !== 'win32') return shellQuote(arg);
  return /^[\w@%+=:,./\\-]+$/.test(arg) ? arg : `"${arg}"`;
}

/** Help text whose examples say `npx ralphkit`, in this process's words (`@latest` only means something to npx). */
export function renderExamples(text: string): string {
  const { cli } = currentCommands();
  return cli === 'npx ralphkit' ? text : text.replace(/npx ralphkit(@latest)? /g, `${cli} `);
}

let cached: RalphkitCommands | undefined;

/** The commands for this process (resolved once): `ralphkitCommand('validate')` → `ralphkit validate`. */
export function ralphkitCommand(args: string): string {
  return `${currentCommands().cli} ${args}`;
}

/** A subcommand the engine has itself (validate, status, cancel): `./ralph/ralph.sh status` inside ralph.mjs started by it. */
export function loopCommand(args: string): string {
  return `${currentCommands().loop} ${args}`;
}

function currentCommands(): RalphkitCommands {
  cached ??= resolveCommands({
    script: process.argv[1],
    platform: process.platform,
    realpath: realpathOrUndefined,
    which: whichOnPath,
    launcher: process.env.RALPHKIT_LAUNCHER,
  });
  return cached;
}

// npm and npx put node_modules/.bin folders on PATH for the programs they start; the user's shell has none of them.
function whichOnPath(name: string): string | undefined {
  return (
    findExecutable(name, process.env, { skip: (folder) => /node_modules[\\/]\.bin[\\/]?$/.test(folder) }) ?? undefined
  );
}

/** How to install with ralphkit `version` or newer: npx fetches it; a clone or a global install is updated first. */
export function renderUpgradeHint(version: string): string {
  const { cli } = currentCommands();
  if (cli === 'npx ralphkit') return 'run `npx ralphkit@latest install` instead';
  const update =
    cli === 'ralphkit'
      ? 'npm install -g ralphkit@latest, or git pull && npm run build in the clone you linked'
      : 'git pull && npm run build in its clone';
  return `update this ralphkit to ${version} or newer (${update}), then run \`${cli} install\``;
}
