#!/usr/bin/env bash
# Fetches the peer kernel libraries for bench/peers/peers_bench.py here (the H200 machine has no
# network) and packs them into parts that fit one device call's carry (64 MiB with the tree):
#   bench/peers/fetch_peers.sh            -> .carry/peers/parts/peers.tar.xz.00, .01, ...
# Wheels for the device's python3 (3.12, x86_64, torch 2.11 + CUDA 13.0), no dependencies pulled in:
# what the image already has (torch, triton, cuda-bindings, numpy, einops, ninja, ...) is not carried.
# bench/peers/README.md says how the parts travel and are put together there.
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=.carry/peers
pins=(quack-kernels==0.6.5 nvidia-cutlass-dsl==4.8.1 nvidia-cutlass-dsl-libs-base==4.8.1
      nvidia-cutlass-dsl-libs-core==4.8.1 nvidia-cutlass-dsl-libs-cu13==4.8.1 apache-tvm-ffi==0.1.15.post2
      torch-c-dlpack-ext==0.1.5 liger-kernel==0.8.5 flashinfer-python==0.7.4)
target=(--python-version 3.12 --implementation cp --only-binary=:all: --platform manylinux_2_28_x86_64
        --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64
        --platform manylinux2014_x86_64 --platform any)
mkdir -p "$dest/wheels"
python3 -m pip download -q --no-deps "${target[@]}" -d "$dest/wheels" "${pins[@]}"
rm -rf "$dest/site" "$dest/parts"
python3 -m pip install -q --no-deps --no-compile --no-cache-dir --target "$dest/site" "${target[@]}" \
  $(for p in "${pins[@]}"; do ls "$dest/wheels/$(echo "${p%%==*}" | tr - _)"-"${p##*==}"-*.whl; done)
# FlashInfer compiles its norm and activation modules on first use from csrc/norm.cu,
# csrc/flashinfer_norm_binding.cu, a generated activation source, csrc/tvm_ffi_utils.h and the headers
# under data/include, cutlass, cccl, spdlog. The rest of csrc (MoE, attention, GEMM sources, 390 MB) is
# left here so that the carry stays at two parts.
csrc=$dest/site/flashinfer/data/csrc
find "$csrc" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
find "$csrc" -maxdepth 1 -type f -size +300k -delete
rm -rf "$dest/site/nvidia_cutlass_dsl/cu13/lib/stubs"
du -sh "$dest/site"
mkdir -p "$dest/parts"
tar -C "$dest/site" -cf - . | xz -T2 -6 | split -b 48M -d - "$dest/parts/peers.tar.xz."
ls -l "$dest/parts"
