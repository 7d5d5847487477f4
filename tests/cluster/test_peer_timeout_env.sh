#!/usr/bin/env bash
# SCALEBENCH_PEER_TIMEOUT under mpirun on this machine: a bad value is one usage line naming the
# variable and exit 2, on every rank's behalf; 0 and a valid value leave a one-host run as it was
# (the watchdog starts only across hosts).
set -euo pipefail
bin="${SCALEBENCH_BINARY:?}"
mpiexec="${SCALEBENCH_MPIEXEC:-mpirun}"
work=$(mktemp -d /tmp/scalebench-peer-timeout.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
run() {  # run VALUE: montecarlo on 2 ranks with SCALEBENCH_PEER_TIMEOUT=VALUE; sets rc
  rc=0
  SCALEBENCH_PEER_TIMEOUT="$1" timeout 120 "$mpiexec" -np 2 -x SCALEBENCH_PEER_TIMEOUT "$bin" montecarlo \
    --problem pi --samples 1e6 --reps 1 --warmup 0 --threads 1 --quiet --json "$work/mc.json" >"$work/out.txt" 2>&1 || rc=$?
}
for bad in abc -1 1.5 86401; do
  rm -f "$work/mc.json"
  run "$bad"
  [ "$rc" = 2 ] || { cat "$work/out.txt"; fail "SCALEBENCH_PEER_TIMEOUT=$bad: exit $rc, not 2"; }
  [ "$(grep -c '^scalebench: error: ' "$work/out.txt")" = 1 ] || { cat "$work/out.txt"; fail "$bad: not one error line"; }
  grep -qx "scalebench: error: SCALEBENCH_PEER_TIMEOUT must be a whole number in \[0, 86400\] (got '$bad')" "$work/out.txt" ||
    { cat "$work/out.txt"; fail "$bad: the line does not name the variable and the value"; }
  [ ! -e "$work/mc.json" ] || fail "$bad: a record was written"
done
for good in 0 1 30 ""; do
  run "$good"
  [ "$rc" = 0 ] || { cat "$work/out.txt"; fail "SCALEBENCH_PEER_TIMEOUT='$good': exit $rc"; }
  python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["ok"]' "$work/mc.json" || fail "'$good': record not ok"
done
echo "SCALEBENCH_PEER_TIMEOUT: bad values give exit 2 and one line; 0, 1, 30 and unset run"
