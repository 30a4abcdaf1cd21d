#!/usr/bin/env bash
# Runs on the H200 machine (device tool). The peer packages travel as parts made by fetch_peers.sh,
# one part a call (a carry holds 64 MiB), while the machine stays warm:
#   bench/peers/run_h200.sh stash          keeps the carried parts in /tmp for the next call
#   bench/peers/run_h200.sh [ARGS...]      joins the parts, unpacks them, builds khub's kernels
#                                          (bench/kernels/run_h200.sh, no stage), then runs
#                                          peers_bench.py ARGS -> $OUT/h200_peers.json, $OUT/peers.log
# While khub builds, peers_bench.py --warm-only makes the peers' first calls (FlashInfer's JIT
# modules, the CuTe-DSL and Triton caches). KHUB_COMMIT names the source commit (the device's copy of
# the tree keeps an old git HEAD).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/khub-out}
stash=/tmp/khub-peers-parts
site=/tmp/khub-peers-site
mkdir -p "$OUT" "$stash"
cp .carry/peers/parts/peers.tar.xz.* "$stash/" 2>/dev/null
if [[ ${1:-} == stash ]]; then ls -l "$stash"; exit 0; fi
t0=$SECONDS
if [[ ! -d $site ]]; then
  mkdir -p "$site.tmp"
  if cat "$stash"/peers.tar.xz.* | xz -dc | tar -x -C "$site.tmp"; then
    mv "$site.tmp" "$site"
  else
    echo "peer packages not unpacked (parts in $stash: $(ls "$stash" | tr '\n' ' ')); peers_bench.py records them as missing"
  fi
fi
echo "== unpacked ($((SECONDS - t0)) s)"
python3 bench/peers/peers_bench.py --warm-only --site "$site" > "$OUT/warm.log" 2>&1 &
warm=$!
# The peers' apache-tvm-ffi (FlashInfer's dependency, the version scripts/requirements.txt pins) is the one
# khub's CMake finds through `import tvm_ffi`: the build then makes the tvm-ffi variants too.
PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH} OUT=/tmp/khub-build KHUB_COMMIT=${KHUB_COMMIT:-unknown} \
  bash bench/kernels/run_h200.sh > /tmp/khub-build.txt 2>&1
grep -E "failed|error" /tmp/khub-build.txt | head -20
echo "== khub built ($((SECONDS - t0)) s)"
wait $warm
cat "$OUT/warm.log"
echo "== peers warm ($((SECONDS - t0)) s)"
# Ends before the device call's 600 s limit so that the log and the JSON written so far come back.
PYTHONUNBUFFERED=1 timeout $((${KHUB_PEERS_DEADLINE_S:-570} - SECONDS)) python3 bench/peers/peers_bench.py --site "$site" --out "$OUT/h200_peers.json" \
  --commit "${KHUB_COMMIT:-unknown}" "$@" > "$OUT/peers.log" 2>&1
echo "peers_bench rc=$? ($((SECONDS - t0)) s)"
grep -vE " pass [12] cold" "$OUT/peers.log" | tail -40
