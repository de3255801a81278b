#!/usr/bin/env node
// Node 22.1+ keeps V8's compiled code of dist/ between runs (in the OS temp folder), which spares each
// start-up most of its parsing; older Nodes lack the function and start as before. The CLI is imported
// after it, so that its modules are the ones cached. NODE_DISABLE_COMPILE_CACHE=1 turns it off.
import module from 'node:module';

module.enableCompileCache?.();
// `install` has an entry of its own, the same program with that command alone (src/cli-install.ts): one file to
// load instead of the whole CLI's chunks. Anything else, `ralphkit --help` included, is the whole CLI.
await import(process.argv[2] === 'install' ? '../dist/install.js' : '../dist/cli.js');
