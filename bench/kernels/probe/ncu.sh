#!/usr/bin/env bash
# Profiles one probe candidate with Nsight Compute on the GPU machine: the full section set with
# per-SASS-line source counters (stall reasons, issued instructions, memory traffic).
#   ncu.sh NAME CANDIDATE FILTER   -> $OUT/NAME.txt (details page) and $OUT/NAME.csv (source page, SASS)
# CANDIDATE and FILTER are probe's --once substring and workload filter (bench/kernels/probe/probe.cu).
set -uo pipefail
cd "$(dirname "$0")/../../.."
name=$1 candidate=$2 filter=$3
OUT=${OUT:-/tmp/khub-out}
rep=/tmp/ncu-$name
ncu --clock-control none --set full --import-source yes -k regex:'^(?!fill|spin)' -f -o "$rep" \
  build-probe/probe --once "$candidate" "$filter" > "/tmp/ncu-$name.log" 2>&1 || { tail -5 "/tmp/ncu-$name.log"; exit 1; }
ncu --import "$rep.ncu-rep" --page details > "$OUT/$name.txt"
ncu --import "$rep.ncu-rep" --page source --csv --print-source sass > "$OUT/$name.csv"
echo "$name: $(grep -c . "$OUT/$name.csv") source lines"
