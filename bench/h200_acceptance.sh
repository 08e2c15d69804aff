#!/usr/bin/env bash
# The acceptance batch for the lent H200, in one device call (device time is scarce):
# GPU tests, side-by-side benchmarks and sanitizers (SASS facts need no GPU:
# bench/sass_facts.py). Every step has its own
# time limit and writes its log under $OUT; a failing step does not stop the others.
#   bash bench/h200_acceptance.sh            (after the wheel install the device README gives)
set -u
OUT="${OUT:-/tmp/cake-acceptance}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 CAKEC_CACHE_DIR="$OUT/cache"
cd "$(dirname "$0")/.."

LOGS="$OUT"
. bench/step.sh

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
step gpu_tests 100 python3 -m pytest -q -m gpu test/gpu -p no:cacheprovider \
  --ignore=test/gpu/test_feedback_gpu.py  # the loop step below runs it
step bench_gemm 70 python3 bench/gemm.py --out "$OUT"
[ -f bench/kmeans_assign.py ] && step bench_kmeans 80 python3 bench/kmeans_assign.py --out "$OUT"
sanitize() {  # sanitize TOOL EXAMPLE SHAPE
  [ -f "examples/$2" ] && step "$1-${2%.cake}" 40 compute-sanitizer --tool "$1" \
    python3 bench/sanitize_small.py "examples/$2" "$3"
}
sanitize racecheck gemm_bf16.cake M=300,N=520,K=136
# 140 row-block items: on 132 SMs some CTAs of the persistent kernel take two (the X refill).
sanitize racecheck kmeans_assign.cake B=1,N=35840,K=130,D=128
sanitize synccheck kmeans_assign.cake B=1,N=35840,K=130,D=128
# The feedback loop (docs/run.md): rejection speed with the watchdog's hang reports, the loop's
# GPU tests (deadlocks, the planted race and its control under racecheck, --record), and the
# run report of every runnable example; its own steps and limits, logs packed in loop.tgz.
step loop 600 env LOOP_LOGS="$OUT/loop" bash bench/loop_h200.sh
