#!/usr/bin/env bash
# Installs khub into a temporary prefix and builds examples/rmsnorm_app on its own against it,
# as an application would: find_package(khub CONFIG) and khub::kernel.
set -euo pipefail
root=$1 build=$2 torch_prefix=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$root/examples/rmsnorm_app" -B "$tmp/app" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$tmp/prefix;$torch_prefix/share/cmake" -DTORCH_CUDA_ARCH_LIST=9.0 >"$tmp/configure.log" 2>&1 \
  || { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/app" -j 2 >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
test -x "$tmp/app/rmsnorm_app"
echo "built rmsnorm_app against the installed khub package"
