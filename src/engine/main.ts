// Entry of dist/ralph.mjs. Placeholder until the loop engine lands.
process.stderr.write('ralph.mjs: the loop engine is not built yet\n');
process.exitCode = 1;
