#!/usr/bin/env bash
# calibrate's closing check catches figures timed while the machine was busier than it is by the
# check: two busy loops per CPU run while calibrate (one process) times the CPU figures and is
# stopped once they are taken. The checks then miss outside their bands, the figures behind them
# are timed again on the quiet machine, and the profile keeps the faster ones and says so.
set -euo pipefail
bin="${SCALEBENCH_BINARY:?}"
dir=$(mktemp -d /tmp/scalebench-test-retime.XXXXXX)
hogs=()
stop_hogs() {
  if [ "${#hogs[@]}" -gt 0 ]; then
    kill "${hogs[@]}" 2>/dev/null || true
    wait "${hogs[@]}" 2>/dev/null || true
  fi
  hogs=()
}
cleanup() { stop_hogs; rm -rf "$dir"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; cat "$dir/log"; exit 1; }

# One calibration under a load of $1 busy loops per CPU; 0 when its 1-thread BLAS check asked for
# its figures again.
attempt() {
  rm -f "$dir/log" "$dir/profile.json"
  for _ in $(seq 1 $(($1 * $(nproc)))); do
    (while :; do :; done) &
    hogs+=("$!")
  done
  env -u SCALEBENCH_PROFILE "$bin" calibrate --quick --out "$dir/profile.json" >"$dir/log" 2>&1 &
  cal=$!
  # The last CPU figure is the Asian option's Monte Carlo rate: the load stops there, before the
  # checks.
  while kill -0 "$cal" 2>/dev/null && ! grep -q "calibrate: Monte Carlo asian" "$dir/log"; do sleep 0.1; done
  stop_hogs
  wait "$cal" || fail "calibrate exited $?"
  grep -q "check openblas 1 thread: missed by more than 15% outside its band: its figures are timed again" "$dir/log"
}
# The load is the scheduler's to share out: a 1-thread figure timed in slices the busy loops left
# free can come out near its quiet speed, its spread then widens the check's band, and the check
# has nothing to catch. Calibrations under a heavier load each time settle it (each took 40-130 s
# on the 2-core box; a CI run on that box once saw two in a row escape two loops per CPU).
if ! attempt 2; then
  echo "note: the first calibration's 1-thread figures escaped the load; once more, under twice the load"
  if ! attempt 4; then
    echo "note: the second escaped too; once more, under three times the load"
    attempt 6 || fail "the 1-thread BLAS check did not ask for its figures again (three times)"
  fi
fi
python3 - "$dir/log" "$dir/profile.json" <<'PY' || fail "the profile does not hold the figures timed again"
import json, re, sys
log, prof = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
rates = [float(x) for x in re.findall(r"BLAS fp64 1 thread\(s\) 1024\^3: ([0-9.]+) GFLOP/s", log)]
assert len(rates) == 2, rates                      # timed under the load, then again
assert rates[1] > 1.25 * rates[0], rates           # the quiet machine is faster
kept = [p["gflops"] for p in prof["blas"]["fp64"] if p["threads"] == 1 and p["n"] == 1024]
assert kept == [rates[1]] or abs(kept[0] - rates[1]) < 0.1, (kept, rates)
checks = [c for c in prof["checks"] if "--backend openblas --threads 1 " in c["what"]]
assert len(checks) == 2 and checks[0].get("timed_again") is True, checks
assert abs(checks[1]["miss"]) < abs(checks[0]["miss"]), checks
print(f"1-thread fp64 at 1024: {rates[0]:.1f} GFLOP/s under load, {rates[1]:.1f} timed again; "
      f"check {checks[0]['miss']:+.0%} then {checks[1]['miss']:+.0%}")
PY
echo "ok"
