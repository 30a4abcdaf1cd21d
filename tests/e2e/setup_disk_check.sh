#!/usr/bin/env bash
# scripts/setup on a disk too small for .venv: it must stop before pip with one line naming the
# space it needs and the space there is, exit 1, and leave no .venv or build/ behind. The disk
# reading comes from a stand-in `df` on PATH reporting 1 GiB free (filling a real disk is not an
# option in a test).
set -euo pipefail
src=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/repo/scripts" "$work/bin"
cp "$src/scripts/setup" "$src/scripts/requirements.txt" "$work/repo/scripts/"
cat > "$work/bin/df" <<'DF'
#!/bin/sh
echo "Filesystem 1024-blocks Used Available Capacity Mounted on"
echo "/dev/fake 10485760 9437184 1048576 90% /"
DF
chmod +x "$work/bin/df"
set +e
err=$(cd "$work/repo" && PATH="$work/bin:$PATH" KHUB_SKIP_APT=1 bash scripts/setup 2>&1 >/dev/null)
rc=$?
set -e
fail() { echo "FAIL: $*"; echo "setup printed: $err"; exit 1; }
[[ $rc == 1 ]] || fail "exit code $rc, expected 1"
[[ $(grep -c . <<<"$err") == 2 ]] || fail "expected the 'creating .venv' line and one error line"
grep -qF "error: about 9 GiB of disk needed for .venv (torch with its CUDA libraries) and build/, and the disk of $work/repo has 1 GiB free; make room and run again" <<<"$err" \
  || fail "the error line does not say what is needed and what is free"
[[ ! -e "$work/repo/.venv" ]] || fail ".venv was created"
[[ ! -e "$work/repo/build" ]] || fail "build/ was created"
echo "ok: setup stopped before pip with: $(tail -1 <<<"$err")"
