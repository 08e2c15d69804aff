#!/usr/bin/env bash
# The acceptance batch for the lent H200, in one device call (device time is scarce):
# GPU tests, side-by-side benchmarks, sanitizers and SASS facts. Every step has its own
# time limit and writes its log under $OUT; a failing step does not stop the others.
#   bash bench/h200_acceptance.sh            (after the wheel install the device README gives)
set -u
OUT="${OUT:-/tmp/cake-acceptance}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 CAKEC_CACHE_DIR="$OUT/cache"
cd "$(dirname "$0")/.."

step() {  # step NAME SECONDS COMMAND...
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  echo "== $name: rc=$rc ($((SECONDS - t0)) s)"
  tail -n 25 "$OUT/$name.log"
}

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
step gpu_tests 150 python3 -m pytest -q -m gpu test/gpu -p no:cacheprovider
step bench_gemm 120 python3 bench/gemm.py --out "$OUT"
[ -f bench/kmeans_assign.py ] && step bench_kmeans 120 python3 bench/kmeans_assign.py --out "$OUT"
step sass 60 python3 bench/sass_facts.py
step racecheck 90 compute-sanitizer --tool racecheck python3 -m cakec.cli run examples/gemm_bf16.cake --target sm_90a --shape M=300,N=520,K=136
step synccheck 90 compute-sanitizer --tool synccheck python3 -m cakec.cli run examples/gemm_bf16.cake --target sm_90a --shape M=300,N=520,K=136
