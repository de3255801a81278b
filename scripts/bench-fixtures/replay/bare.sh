#!/bin/sh
# The bare work of the `replay` benchmark, without ralphkit: in a copy of the project (the current folder), install
# the dependencies once, then for each story named on the command line, in that order, copy its prepared change
# (changes/<id>/, next to this script) into place and run its test once. Stops at the first failure.
set -e
changes="$(dirname "$0")/changes"
npm ci > /dev/null 2>&1
for id in "$@"; do
  cp -R "$changes/$id/." .
  node --test "test/$id.test.mjs" > /dev/null
done
