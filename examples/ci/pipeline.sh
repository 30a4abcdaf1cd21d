#!/usr/bin/env bash
# A publishing pipeline as CI runs it: one job per build variant (hash → check → sign → pack into a
# bundle artifact), then one publish job that pushes every bundle at once (`khub push A.tar.zst …`).
#
#   examples/ci/pipeline.sh --kernel DIR --repo ORG/NAME [--key KEY.pem] [--local] [--abi-check MODE]
#   examples/ci/pipeline.sh --demo --local          # synthetic kernel, local hub: runs anywhere
#
#   --kernel DIR   kernel project whose build/<variant>/ trees are already built (e.g. kernels/rmsnorm)
#   --demo         make a small synthetic build instead (one arch variant, one noarch variant)
#   --repo ID      target repo (default: general.hub.repo-id of DIR/build.toml; khub-demo/relu with --demo)
#   --key PEM      sign each variant's metadata.json (ECDSA P-256 or Ed25519)
#   --local        start `khub serve` on 127.0.0.1 and publish there (otherwise HF_ENDPOINT / huggingface.co)
#   --abi-check    error (default) | warn | off — passed to khub push
# Environment: KHUB (khub binary, default build/bin/khub), HF_TOKEN (token; --local makes one up).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
khub=${KHUB:-$root/build/bin/khub}
kernel="" repo="" key="" local_hub=0 demo=0 abi=error
while (($#)); do
  case $1 in
    --kernel) kernel=$2; shift 2 ;;
    --repo) repo=$2; shift 2 ;;
    --key) key=$2; shift 2 ;;
    --local) local_hub=1; shift ;;
    --demo) demo=1; shift ;;
    --abi-check) abi=$2; shift 2 ;;
    *) echo "error: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -x $khub ]] || { echo "error: $khub not found; build khub first (scripts/setup)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/khub-ci.XXXXXX")
server_pid=""
cleanup() {
  [[ -n $server_pid ]] && { kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; }
  rm -rf "$work"
}
trap cleanup EXIT
step() { printf '\n== %s\n' "$*" >&2; }

make_demo_kernel() {  # a build as kernel-builder lays it out; the native module mimics TORCH_LIBRARY
  local dir=$1 id=_relu_cpu_0123abc arch=torch212-cxx11-cpu-x86_64-linux
  mkdir -p "$dir/build/$arch" "$dir/build/torch-cpu" "$dir/benchmarks"
  for v in "$arch" torch-cpu; do
    printf 'from ._ops import ops\n' >"$dir/build/$v/__init__.py"
    printf 'import torch\nops = torch.ops.%s\n' "$id" >"$dir/build/$v/_ops.py"
    printf '{"name":"relu","id":"%s","version":1,"license":"Apache-2.0","python-depends":[],"backend":{"type":"cpu"}}' \
      "$id" >"$dir/build/$v/metadata.json"
  done
  c++ -shared -fPIC -O2 -DKHUB_NS="$id" -o "$dir/build/$arch/$id.abi3.so" \
    "$root/tests/publish/fixtures/torch_module.cpp"
  printf '# relu (demo)\n' >"$dir/build/CARD.md"
  printf 'print("benchmark")\n' >"$dir/benchmarks/benchmark_relu.py"
}

if ((demo)); then
  kernel=$work/kernel
  make_demo_kernel "$kernel"
  repo=${repo:-khub-demo/relu}
fi
[[ -n $kernel && -d $kernel/build ]] || { echo "error: --kernel DIR with DIR/build/<variant>/ (or --demo) is required" >&2; exit 2; }

if ((local_hub)); then
  step "local hub"
  export HF_TOKEN=${HF_TOKEN:-hf_ci_local}
  "$khub" serve --root "$work/hub" --host 127.0.0.1 --port 0 --token "$HF_TOKEN" -q >"$work/serve.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 200); do
    url=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$work/serve.log" | head -n 1 || true)
    [[ -n ${url:-} ]] && break
    sleep 0.05
  done
  [[ -n ${url:-} ]] || { cat "$work/serve.log" >&2; echo "error: khub serve did not start" >&2; exit 1; }
  export HF_ENDPOINT=$url
  echo "hub: $HF_ENDPOINT" >&2
fi

# Matrix jobs: each sees only its own variant (as separate CI runners would) and uploads a bundle.
mkdir -p "$work/artifacts"
for variant_dir in "$kernel"/build/*/; do
  variant=$(basename "$variant_dir")
  [[ -f $variant_dir/metadata.json ]] || continue
  step "job $variant"
  job=$work/jobs/$variant
  mkdir -p "$job/build"
  cp -R "$variant_dir" "$job/build/$variant"
  [[ -f $kernel/build/CARD.md ]] && cp "$kernel/build/CARD.md" "$job/build/CARD.md"
  [[ -d $kernel/benchmarks ]] && cp -R "$kernel/benchmarks" "$job/benchmarks"
  "$khub" hash "$job/build/$variant"
  if [[ $abi == error ]]; then "$khub" check "$job/build"; else "$khub" check "$job/build" --no-abi; fi
  [[ -n $key ]] && "$khub" sign "$job/build/$variant" --key "$key"
  "$khub" pack "$job" -o "$work/artifacts/$variant.tar.zst"
done

# Publish job: all bundles in one push (one branch v<version>, one or more commits).
step "publish"
repo_args=()
[[ -n $repo ]] && repo_args=(--repo "$repo")
[[ ! -f $kernel/build.toml || -n $repo ]] || { echo "error: --repo is required for bundles" >&2; exit 2; }
"$khub" push "$work"/artifacts/*.tar.zst "${repo_args[@]}" --abi-check "$abi" --json
