#!/usr/bin/env bash
# The device batch that decides the GEMM candidates without a rule (docs/kernels.md, "The
# large compute-bound shapes"), in one call: their GPU tests, then `cakec tune gemm --adopt`
# (every route timed; the shipped rules kept, a candidate taking a rule only where it was
# faster over that rule's shapes in this run) and the portfolio with the table it wrote.
# Logs and the adopted table (+ its timings) under $OUT.
#   bash bench/gemm_candidates.sh        (after the wheel install the device README gives)
set -u
OUT="${OUT:-/tmp/cake-gemm-candidates}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."
LOGS="$OUT"
. bench/step.sh
CANDIDATES=persistent_128x256_mc,persistent_128x224,persistent_128x224_mc

step tests 100 python3 -m pytest -m gpu -q -x test/gpu/test_kernels_gpu.py -k "mc or 224"
grep -q " passed" "$LOGS/tests.log" && ! grep -q "failed\|error" "$LOGS/tests.log" || exit 3
step tune 170 cakec tune gemm --out "$OUT/r" --adopt "$CANDIDATES"
[ -f "$OUT/r/gemm_routes.json" ] || exit 4
step portfolio 130 env CAKEC_ROUTES_DIR="$OUT/r" python3 bench/portfolio.py --only gemm --out "$OUT/p"
