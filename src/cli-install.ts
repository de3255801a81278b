// The entry of `ralphkit install` (dist/install.js; bin/ralphkit.js picks it when the first argument is `install`):
// the program of src/program.ts with that command alone, options and validation as in the whole CLI. Built on its
// own, it is one file with its action, where dist/cli.js spreads the same code over some twenty chunks it shares
// with the other commands, and each ES module loaded costs Node its own resolve, read, compile and link.
import { runAsEntry } from './program.js';
import { register as registerInstall } from './commands/install.js';
// Imported here too, the action that install.ts loads with import() lands in this entry's own graph, so the
// bundler keeps it with everything else install needs instead of splitting the shared code into chunks.
import './commands/install-action.js';

runAsEntry([registerInstall]);
