#!/usr/bin/env bash
# Runs the README's quick-start commands as written: the first line of the block (the main job) is
# executed verbatim; the second must be the test command that .ci/run calls (CI runs it, so running
# it here would recurse).
set -euo pipefail
root=$1
cd "$root"
block=$(awk '/^## Quick start/{q=1} q&&/^```sh/{b=1;next} b&&/^```/{exit} b' README.md | grep -v '^[[:space:]]*#' | grep -v '^[[:space:]]*$')
main_cmd=$(sed -n 1p <<<"$block" | sed 's/[[:space:]]*#.*$//')
test_cmd=$(sed -n 2p <<<"$block" | sed 's/[[:space:]]*#.*$//')
[[ $(wc -l <<<"$block") -eq 2 ]] || { echo "README quick start must hold exactly two commands, found:"; echo "$block"; exit 1; }
grep -q "exec $test_cmd\$" .ci/run || { echo ".ci/run does not call the README's test command '$test_cmd'"; exit 1; }
echo "running the README's main command: $main_cmd"
unset HF_ENDPOINT
out=$(bash -c "$main_cmd" 2>&1) || { echo "$out"; echo "main command failed"; exit 1; }
echo "$out"
grep -q "main job finished" <<<"$out"
grep -q "qwen3_norms on .*: all shapes match" <<<"$out"
grep -q "ltx_block .*: correct" <<<"$out"
