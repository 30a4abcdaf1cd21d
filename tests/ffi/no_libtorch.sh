#!/usr/bin/env bash
# Proves the torch-free API keeps LibTorch out (ctest ffi.no_libtorch): ffi_rmsnorm_app and every
# compile/link of khub::ffi and of the app see no torch/c10/ATen include directory, no LibTorch library on
# their link line, and the app's loaded libraries (ldd) contain no libtorch, libc10 or libpython.
#   no_libtorch.sh <build dir> <ffi_rmsnorm_app binary>
set -euo pipefail
build=$1
app=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
pattern='torch|/c10|ATen|libpython|site-packages/nvidia'

# 1. Compile commands of khub::ffi's sources and the app's main.cpp (compile_commands.json).
python3 - "$build/compile_commands.json" "$pattern" <<'PY' || fail "a torch include path in a khub::ffi / app compile"
import json, re, sys
entries = json.load(open(sys.argv[1]))
files = [e for e in entries if "/hubclient/ffi/" in e["file"] or "/examples/ffi_rmsnorm_app/" in e["file"]]
assert len(files) >= 3, f"expected khub::ffi and app sources in compile_commands.json, found {len(files)}"
bad = [e["file"] for e in files if re.search(sys.argv[2], e.get("command") or " ".join(e.get("arguments", [])))]
print("compile commands checked:", len(files))
sys.exit(1 if bad else 0)
PY

# 2. The app's link line (ninja's command for it).
if [[ -f "$build/build.ninja" ]]; then
  link=$(ninja -C "$build" -t commands ffi_rmsnorm_app | tail -n 1)
  [[ $link == *ffi_rmsnorm_app* ]] || fail "no link command for ffi_rmsnorm_app"
  if grep -Eq "$pattern|-ltorch|-lc10" <<<"$link"; then fail "LibTorch on the link line: $link"; fi
  echo "link line checked"
fi

# 3. What the loader resolves for the app.
deps=$(ldd "$app")
if grep -Eiq 'libtorch|libc10|libpython' <<<"$deps"; then fail "the app loads LibTorch/Python: $deps"; fi
echo "ldd checked: $(wc -l <<<"$deps") libraries, none from LibTorch"

# 4. And when it runs: load + call on the CPU with a bundled build; /proc/self/maps-equivalent via LD_DEBUG.
if [[ -n "${3:-}" ]]; then
  out=$(LD_DEBUG=files "$app" "$3" 2>&1) || fail "ffi_rmsnorm_app $3 failed: $out"
  if grep -Eq 'file=.*(libtorch|libc10|libpython)' <<<"$out"; then fail "LibTorch/Python loaded at run time"; fi
  grep -q "all checks passed" <<<"$out" || fail "app did not pass: $out"
  echo "run checked: $(grep -c 'file=' <<<"$out") library loads, none from LibTorch"
fi
echo "ok: no LibTorch on the include path, the link line or in the process"
