#!/usr/bin/env bash
# Runs on the H200 machine (device tool; docs/gpu-testing.md): builds the kernels for that machine's
# torch, then the stages named on the command line, in order:
#   test      GPU correctness suite (kernels_gpu_test)
#   sanitize  compute-sanitizer memcheck over the suite minus the >2^31-element cases
#   bench     kernels_bench (C++, CUDA events), with the few-row host-time breakdown -> $OUT/h200_kernels.json
#   baselines PyTorch eager / F.rms_norm / torch.compile -> $OUT/h200_baselines.json
#   mutate    rebuilds the suite with griddepcontrol.wait removed from every kernel and runs the
#             chained-calls tests, which must fail (put it last: it leaves the mutated build)
# Logs and JSON land in $OUT (default /tmp/khub-out). The JSON files carry their provenance (commit,
# date, machine; bench/record.py) and have the names of bench/results/, so a run's results replace the
# current ones there as they are (render docs/benchmarks.md with bench/render_docs.py afterwards).
# KHUB_COMMIT names the source commit: write the local SHA into the device command, as the device's
# copy of the tree keeps the session's first commit as its git HEAD.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/khub-out}
mkdir -p "$OUT"
commit=${KHUB_COMMIT:-unknown}
build=build-h200
t0=$SECONDS
stamp() { echo "== $1 ($((SECONDS - t0)) s)"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,ecc.mode.current --format=csv > "$OUT/gpu.txt" 2>&1
stamp configure
common=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DKHUB_PYTHON="$(command -v python3)" -DKHUB_BUILD_GPU_TESTS=ON
        -DKHUB_KERNELS_UID="${commit:0:7}")
# The whole project first; if its client dependencies are missing there, the kernels-only project.
if ! cmake -S . -B $build "${common[@]}" -DKHUB_WITH_ARCHIVE=OFF -DKHUB_WITH_SERVER=OFF > "$OUT/build.log" 2>&1; then
  echo "full configure failed ($(grep -m1 -i "could not\|not found" "$OUT/build.log")); kernels-only project"
  rm -rf $build
  cmake -S bench/kernels/standalone -B $build "${common[@]}" -DKHUB_EXTRA_INCLUDE="$PWD/.deps/include" \
    >> "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
fi
stamp build
# Each target on its own, so a failure in one leaves the stages of the others.
for target in khub_kernels kernels_gpu_test kernels_bench; do
  cmake --build $build -j "$(nproc)" --target $target >> "$OUT/build.log" 2>&1 \
    || { echo "build of $target failed"; grep -B2 -A12 "error" "$OUT/build.log" | head -60; }
done
test_bin=$(find $build -name kernels_gpu_test -type f | head -1)
bench_bin=$(find $build -name kernels_bench -type f | head -1)
for stage in "$@"; do
  stamp "$stage"
  case $stage in
    test) $test_bin --gtest_brief=1 > "$OUT/gpu_test.log" 2>&1; echo "gpu tests rc=$?"
          grep -E "PASSED|FAILED|SKIPPED|tests ran" "$OUT/gpu_test.log" | tail -15
          sed -n '/max abs error/,$p' "$OUT/gpu_test.log" | head -40
          # The same suite on the torch-stable-abi210-cu130 builds (ctest kernels_gpu_test.stable_abi).
          KHUB_KERNELS_TEST_ABI=stable $test_bin --gtest_brief=1 --gtest_filter='-VariantLayout.*:FastDiv*:StableAbi.*' \
            > "$OUT/gpu_test_stable.log" 2>&1; echo "gpu tests (stable ABI) rc=$?"
          grep -E "PASSED|FAILED|SKIPPED|tests ran" "$OUT/gpu_test_stable.log" | tail -15 ;;
    sanitize) timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $test_bin \
                --gtest_brief=1 --gtest_filter='-*Large*:*Errors*' > "$OUT/sanitizer.log" 2>&1
              echo "sanitizer rc=$?"; grep -E "ERROR SUMMARY|tests ran|PASSED|FAILED" "$OUT/sanitizer.log" | tail -5 ;;
    bench) $bench_bin --out "$OUT/h200_kernels.json" --commit "$commit" --host-breakdown \
             > "$OUT/bench.log" 2>&1; echo "bench rc=$?"; cat "$OUT/bench.log"
           python3 bench/record.py stamp "$OUT/h200_kernels.json" --commit "$commit" ;;
    mutate) hdr=kernels/common/include/khub_kernels/launch.cuh
            sed 's|asm volatile("griddepcontrol.wait;" ::: "memory");|/* mutation: no wait */|' $hdr > "$OUT/launch.cuh"
            if cmp -s $hdr "$OUT/launch.cuh"; then echo "mutation not applied"; continue; fi
            cp "$OUT/launch.cuh" $hdr
            # The suite loads the ops from the built variants (khub_kernels), so those are rebuilt.
            cmake --build $build -j "$(nproc)" --target khub_kernels kernels_gpu_test >> "$OUT/build.log" 2>&1 \
              || echo "mutant build failed"
            $test_bin --gtest_brief=1 --gtest_filter='*Chained*' --gtest_repeat=3 > "$OUT/mutate.log" 2>&1
            echo "mutant (no griddepcontrol.wait): chained-calls tests rc=$? (non-zero = caught)"
            grep -E "FAILED|PASSED|Failure" "$OUT/mutate.log" | sort | uniq -c | head -8 ;;
    baselines) PYTHONUNBUFFERED=1 python3 bench/kernels/baselines.py --out "$OUT/h200_baselines.json" --variants kernels --commit "$commit" \
                 > "$OUT/baselines.log" 2>&1; echo "baselines rc=$?"; tail -60 "$OUT/baselines.log" ;;
  esac
done
stamp done
