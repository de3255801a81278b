#!/bin/sh
# Runs the Ralph loop: ralph.mjs (beside this file) with Node.js, passing every argument on.
#   ./ralph/ralph.sh [options] [max_iterations]     ./ralph/ralph.sh --help for the options
#   ./ralph/ralph.sh validate | status | cancel <id> | cleanup
# Installed by ralphkit; running ralphkit's install again upgrades it. On Windows, run
# `node ralph/ralph.mjs run` (or `node ralph/ralph.mjs validate`, ...) instead.
case $0 in */*) dir=${0%/*} ;; *) dir=. ;; esac
dir=$(CDPATH= cd -- "${dir:-/}" && pwd) || exit 1
# What this file starts (node, sed, grep, sha256sum) runs outside the sandbox, so it is looked up on PATH without the
# entries a sandboxed agent can fill: relative and empty ones (the current folder) and folders inside the repository,
# by real path (direnv's `PATH_add bin` with an ignored bin/node the agent wrote). One subshell, builtins only. The
# engine gets your PATH as it is (it leaves the repository's folders out of what it starts itself).
user_path=$PATH
safe_path=$(
  CDPATH= IFS=:
  set -f
  cd -P -- "${dir%/*}/" || exit 1
  root=$PWD
  out=
  for d in $user_path; do
    case $d in /*) ;; *) continue ;; esac
    cd -P -- "$d" 2>/dev/null || continue
    case $PWD/ in "$root"/*) continue ;; esac
    out=$out${out:+:}$PWD
  done
  printf '%s' "$out"
)
node=
if [ -n "$safe_path" ]; then
  PATH=$safe_path
  node=$(command -v node) || node=
fi
if [ -z "$node" ]; then
  PATH=$user_path
  if shadow=$(command -v node 2>/dev/null) && [ -n "$shadow" ]; then
    case $shadow in /*) ;; *) shadow=$PWD/$shadow ;; esac
    echo "ralph.sh: the only 'node' on PATH is $shadow, inside the repository or found through a relative or empty PATH entry (the current folder): the agent can write there, so it is not run." >&2
    echo "Put the folder of your Node.js 20 or newer on PATH by its absolute path, outside the repository, then run $0 again." >&2
  else
    echo "ralph.sh: the loop needs Node.js 20 or newer, and 'node' is not on PATH." >&2
    echo "Install it (https://nodejs.org or your package manager), then run $0 again." >&2
  fi
  exit 127
fi
# Nor does node load what your environment has it load from the repository: a NODE_OPTIONS that names it (Yarn's
# `--require <repo>/.pnp.cjs`, an ignored file the agent can rewrite) is handed to the engine aside, for what it starts
# (under its rules for variables naming the repository); the loader's LD_PRELOAD, LD_LIBRARY_PATH and LD_AUDIT, and
# OpenSSL's OPENSSL_CONF, OPENSSL_MODULES and OPENSSL_ENGINES (node loads the providers a configuration names), that
# name it are dropped.
root=$(CDPATH= cd -P -- "${dir%/*}/" && pwd) || exit 1
names_repo() {
  case $1 in *"$root"/* | *"$root" | *"${dir%/*}"/* | *"${dir%/*}") return 0 ;; esac
  return 1
}
if [ -n "${NODE_OPTIONS-}" ] && names_repo "$NODE_OPTIONS"; then
  RALPHKIT_NODE_OPTIONS=$NODE_OPTIONS
  export RALPHKIT_NODE_OPTIONS
  unset NODE_OPTIONS
fi
for name in LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT OPENSSL_CONF OPENSSL_MODULES OPENSSL_ENGINES; do
  eval "value=\${$name-}"
  [ -n "$value" ] && names_repo "$value" && unset "$name"
done
# Before the engine runs a line of its own: is ralph.mjs the file ralphkit installed (the hash in .ralphkit.json)?
# An agent that edited it would otherwise be the verifier of its own work. The engine checks this launcher in turn.
check=1
for arg in "$@"; do [ "$arg" = --allow-modified-engine ] && check=0; done
# The usual case costs no second Node.js start: the engine's SHA-256 as sha256sum (or macOS's shasum) gives it, against
# the one .ralphkit.json records, read by sed from the installer's layout (two-space JSON, the entry's hash on the line
# after its name, inside "files"). Only a manifest that is plainly that layout is read so: one "files", one entry that
# names ralph/ralph.mjs, no backslash (no JSON escape); and an engine with no carriage return (CRLF, which Node.js
# hashes as LF). Anything else (no such tool, a mismatch) is decided by Node.js below, which says why and what to type.
# This is no weaker than Node.js's parse: whoever can write these two files can make them agree for either.
if [ "$check" = 1 ]; then
  manifest="$dir/.ralphkit.json"
  cr=$(printf '\r')
  want=
  if [ "$(grep -c '"files"' "$manifest" 2>/dev/null)" = 1 ] && [ "$(grep -c 'ralph/ralph\.mjs' "$manifest" 2>/dev/null)" = 1 ] &&
    ! grep -q '\\' "$manifest" 2>/dev/null && ! grep -q "$cr" "$dir/ralph.mjs" 2>/dev/null; then
    want=$(sed -n '/^  "files": {$/,/^  }/{/^    "ralph\/ralph\.mjs": {$/{n;s/^      "sha256": "\([0-9a-f]\{64\}\)",\{0,1\}$/\1/p;};}' "$manifest" 2>/dev/null)
  fi
  got=
  if [ -n "$want" ]; then
    if command -v sha256sum >/dev/null 2>&1; then
      got=$(sha256sum < "$dir/ralph.mjs" 2>/dev/null)
    elif command -v shasum >/dev/null 2>&1; then
      got=$(shasum -a 256 < "$dir/ralph.mjs" 2>/dev/null)
    fi
    [ "${got%% *}" = "$want" ] && check=0
  fi
fi
if [ "$check" = 1 ]; then
  PATH=$user_path "$node" -e '
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
    // ralphkit as the engine names it (util/invocation.ts): the command on PATH, else npx.
    const linked = (process.env.PATH || "").split(path.delimiter).some((d) => {
      if (!d || /node_modules[\\/]\.bin[\\/]?$/.test(d)) return false;
      try { fs.accessSync(path.join(d, "ralphkit"), fs.constants.X_OK); return true; } catch { return false; }
    });
    const cli = linked ? "ralphkit" : "npx ralphkit";
    process.stderr.write("ralph: hint: put it back with: " + cli + " install --force (your version goes to ralph/.backup/), commit, and start again; or run anyway with --allow-modified-engine\n");
    process.exit(2);
  ' "$dir" || exit 2
fi
# exec, so Ctrl-C and `cancel` signal the loop itself and its exit code is ours. RALPHKIT_LAUNCHER: the engine's hints
# then say ./ralph/ralph.sh, as the user typed it.
export RALPHKIT_LAUNCHER=ralph.sh
PATH=$user_path
case "${1-}" in
  run|validate|status|cancel|cleanup|hook) exec "$node" "$dir/ralph.mjs" "$@" ;;
esac
exec "$node" "$dir/ralph.mjs" run "$@"
