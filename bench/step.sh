# Sourced by the device batches (bench/h200_acceptance.sh, bench/loop_h200.sh):
#   step NAME SECONDS COMMAND...
# runs COMMAND under a time limit with its output in $LOGS/NAME.log, prints its exit status,
# its time and the log's last $TAIL lines (25), then runs $AFTER_STEP if set; a failing
# step does not stop the batch.
step() {
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" >"$LOGS/$name.log" 2>&1
  echo "== $name: rc=$? ($((SECONDS - t0)) s)"
  tail -n "${TAIL:-25}" "$LOGS/$name.log"
  if [ -n "${AFTER_STEP:-}" ]; then eval "$AFTER_STEP"; fi
}
