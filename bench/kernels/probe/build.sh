#!/usr/bin/env bash
# Builds the probe (no torch, no CMake) for sm_90 into ${1:-build-probe}/probe.
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=${1:-build-probe}; shift || true
mkdir -p "$out"
inc=(-Ikernels/common/include)
srcs=()
for k in rmsnorm rope3d geglu adaln; do
  inc+=(-Ikernels/$k/${k}_cuda -Ikernels/$k/${k}_cpu)
  srcs+=(kernels/$k/${k}_cuda/$k.cu)
done
nvcc -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -lineinfo --expt-relaxed-constexpr \
  -Xptxas=-warn-spills -diag-suppress 3357 "${inc[@]}" bench/kernels/probe/probe.cu "${srcs[@]}" -lcuda -o "$out/probe" "$@" 2>&1 \
  | grep -v "^$" || true
test -x "$out/probe"
