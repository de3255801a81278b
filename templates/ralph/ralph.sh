#!/bin/sh
# Runs the Ralph loop: ralph.mjs (beside this file) with Node.js, passing every argument on.
#   ./ralph/ralph.sh [options] [max_iterations]     ./ralph/ralph.sh --help for the options
# Installed by ralphkit; `npx ralphkit@latest install` upgrades it. On Windows, run
# `node ralph/ralph.mjs run` instead.
dir=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd) || exit 1
if ! command -v node >/dev/null 2>&1; then
  echo "ralph.sh: the loop needs Node.js 20 or newer, and 'node' is not on PATH." >&2
  echo "Install it (https://nodejs.org or your package manager), then run $0 again." >&2
  exit 127
fi
# Before the engine runs a line of its own: is ralph.mjs the file ralphkit installed (the hash in .ralphkit.json)?
# An agent that edited it would otherwise be the verifier of its own work. The engine checks this launcher in turn.
check=1
for arg in "$@"; do [ "$arg" = --allow-modified-engine ] && check=0; done
if [ "$check" = 1 ]; then
  node -e '
    const fs = require("fs"), path = require("path"), crypto = require("crypto");
    const dir = process.argv[1];
    let want = null, got = null;
    try { want = JSON.parse(fs.readFileSync(path.join(dir, ".ralphkit.json"), "utf8")).files["ralph/ralph.mjs"].sha256; } catch {}
    try {
      const text = fs.readFileSync(path.join(dir, "ralph.mjs")).toString("latin1").replace(/\r\n/g, "\n");
      got = crypto.createHash("sha256").update(Buffer.from(text, "latin1")).digest("hex");
    } catch {}
    if (want && want === got) process.exit(0);
    const why = got === null ? "is missing" : want === null ? "has no record in ralph/.ralphkit.json" : "differs from what ralphkit installed (ralph/.ralphkit.json)";
    process.stderr.write("ralph: ralph/ralph.mjs " + why + ": a modified engine could pass anything; not starting (exit 2)\n");
    process.stderr.write("ralph: hint: put it back with: npx ralphkit install --force (your version goes to ralph/.backup/), commit, and start again; or run anyway with --allow-modified-engine\n");
    process.exit(2);
  ' "$dir" || exit 2
fi
# exec, so Ctrl-C and `ralphkit cancel` signal the loop itself and its exit code is ours.
exec node "$dir/ralph.mjs" run "$@"
