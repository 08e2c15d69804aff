#!/usr/bin/env bash
# The feedback loop's GPU evidence (docs/run.md, "Measured") in one device call: rejection
# speed of every bench/broken/ kernel with the watchdog's hang reports, the loop's GPU tests
# (deadlocks in the schedule's terms, the planted race under racecheck and its clean control,
# a recorded wrong-result failure replayed), and `cakec run --json` on every runnable example.
# Logs and reports go to $LOOP_LOGS and, packed, to $OUT/loop.tgz (the device tool returns at
# most 8 files). A failing step does not stop the others.
#   CAP=60 bash bench/loop_h200.sh       (after the wheel install the device README gives)
set -u
OUT="${OUT:-/tmp/cake-loop}"
LOGS="${LOOP_LOGS:-/tmp/cake-loop-logs}"
mkdir -p "$OUT" "$LOGS"
export PYTHONUNBUFFERED=1 CAKEC_CACHE_DIR="${CAKEC_CACHE_DIR:-/tmp/cake-loop-cache}"
cd "$(dirname "$0")/.."

# Pack after every step: a later one may be cut off by the device call's limit.
AFTER_STEP='tar czf "$OUT/loop.tgz" -C "$LOGS" .'
. bench/step.sh

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "nvdisasm: $(command -v nvdisasm || echo none); compute-sanitizer: $(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || echo none)"
step reject_speed "${REJECT_S:-200}" python3 bench/reject_speed.py --cap "${CAP:-60}" \
  --json "$LOGS/reject_speed.json"
step feedback_tests "${TESTS_S:-200}" python3 -m pytest -q -m gpu test/gpu/test_feedback_gpu.py \
  -p no:cacheprovider -rA ${TESTS_K:+-k "$TESTS_K"}
step run_examples "${EXAMPLES_S:-150}" python3 bench/run_examples.py --out "$LOGS/reports"
