#!/usr/bin/env bash
# The feedback-loop batch for the lent H200 (issue 18), one device call: rejection speed with
# the watchdog's hang reports, `cakec run --json` on the GEMM and k-means examples (the
# watchdog's cost side by side) and the planted SMEM race under racecheck.
set -u
OUT="${OUT:-/tmp/cake-loop}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 CAKEC_CACHE_DIR="$OUT/cache"
cd "$(dirname "$0")/.."
step() {  # step NAME SECONDS COMMAND...
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  timeout -k 5 "$limit" "$@" >"$OUT/$name.log" 2>"$OUT/$name.err"
  echo "== $name: rc=$? ($((SECONDS - t0)) s)"
  tail -n 60 "$OUT/$name.err"
}
summary() {  # the facts of a `cakec run --json` document
  python3 - "$1" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("no JSON:", e); print(open(sys.argv[1]).read()[-3000:]); sys.exit()
keep = ("stage", "reason", "exit_status", "device", "compile", "watchdog", "launch", "hang",
        "numerics", "timing", "speed_of_light", "sanitizer", "record", "context_ok")
for k in keep:
    v = d.get(k)
    if k == "hang" and v:
        v = {**v, "records": v["records"][:3]}
    if k == "sanitizer" and v:
        v = {**v, "log_tail": v["log_tail"][-1500:]}
    print(k, "=", json.dumps(v)[:2500])
PY
}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
which compute-sanitizer nvdisasm || ls /usr/local/cuda/bin | head -50
step reject_speed 170 python3 bench/reject_speed.py --cap "${CAP:-15}" --json "$OUT/reject_speed.json"
cat "$OUT/reject_speed.log"
step run_gemm 60 cakec run examples/gemm_bf16.cake --json; summary "$OUT/run_gemm.log"
step run_kmeans 60 cakec run examples/kmeans_assign.cake --json; summary "$OUT/run_kmeans.log"
step race 120 cakec run bench/broken/kmeans_early_release.cake --unchecked --sanitize racecheck \
  --shape B=1,N=4096,K=1024,D=128 --seeds 1 --no-timing --json; summary "$OUT/race.log"
ls "$OUT"
