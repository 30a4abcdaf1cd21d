#!/usr/bin/env bash
# Installs khub into a temporary prefix and builds examples/ffi_rmsnorm_app on its own against it, with
# only that prefix on CMAKE_PREFIX_PATH (no torch): find_package(khub CONFIG) and khub::ffi configure,
# build and run (on the bundled rmsnorm's build dir) without LibTorch, and no torch path reaches the build.
#   find_package_app.sh <source dir> <build dir> <kernels/rmsnorm/build>
set -euo pipefail
root=$1 build=$2 variants=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
test -f "$tmp/prefix/include/khub/ffi.h" -a -f "$tmp/prefix/include/dlpack/dlpack.h"
cmake -S "$root/examples/ffi_rmsnorm_app" -B "$tmp/app" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/app" -j 2 >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
if grep -rlE 'torch|/c10' "$tmp/app" --include='*.ninja' --include='*.make' --include='*.txt' --include='*.rsp' \
     | grep -v CMakeCache.txt; then
  echo "FAIL: a torch path in the app's build files"; exit 1
fi
"$tmp/app/ffi_rmsnorm_app" "$variants"
echo "built and ran ffi_rmsnorm_app against the installed khub package, without LibTorch"
