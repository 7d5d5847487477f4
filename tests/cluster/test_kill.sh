#!/usr/bin/env bash
# A rank killed (SIGKILL) on the second host of the test cluster mid-run ends the mpirun job
# within seconds with a non-zero exit, leaves no record claiming success and no rank behind.
set -euo pipefail
. "${SCALEBENCH_SOURCE_DIR:?}/tests/cluster/testing.sh"
cluster_up --hosts 2
# Long enough to be killed mid-run: 2e11 samples take minutes on one core.
"$mpiexec" --hostfile "$cluster/hostfile" -np 2 --map-by ppr:1:node --bind-to none \
  "$bin" montecarlo --problem pi --samples 2e11 --threads 1 --reps 1 --warmup 0 --quiet \
  --json "$work/killed.json" >"$work/out.txt" 2>&1 &
job=$!
victim=""
for _ in $(seq 1 300); do
  victim=$(host_pids node2 scalebench | head -1)
  [ -n "$victim" ] && break
  kill -0 "$job" 2>/dev/null || { cat "$work/out.txt"; fail "the job ended before its rank on node2 started"; }
  sleep 0.1
done
[ -n "$victim" ] || { kill "$job"; fail "no rank started on node2 within 30 s"; }
sleep 1  # mid-run: past start-up, into the samples
kill -0 "$job" 2>/dev/null || { cat "$work/out.txt"; fail "the job ended before the kill"; }
kill -KILL "$victim"
t0=$(date +%s.%N)
rc=0
for _ in $(seq 1 200); do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$job" 2>/dev/null; then kill "$job"; fail "the job still runs 20 s after a rank was killed"; fi
wait "$job" || rc=$?
secs=$(python3 -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$t0")
cat "$work/out.txt"
[ "$rc" != 0 ] || fail "the job exited 0 after a rank was killed"
[ -z "$(host_pids node1 scalebench)$(host_pids node2 scalebench)" ] || fail "ranks left running after the job ended"
if [ -f "$work/killed.json" ]; then
  check 'import json, sys; assert not json.load(open(sys.argv[1]))["ok"]' "$work/killed.json"
fi
echo "cluster: the rank killed on node2 ended the job in ${secs} s with exit $rc"
