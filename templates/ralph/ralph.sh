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
# exec, so Ctrl-C and `ralphkit cancel` signal the loop itself and its exit code is ours.
exec node "$dir/ralph.mjs" run "$@"
