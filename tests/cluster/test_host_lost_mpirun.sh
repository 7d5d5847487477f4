#!/usr/bin/env bash
# mpirun itself ends when a host is lost, as with ssh's ServerAliveInterval/ServerAliveCountMax:
# the test cluster's rsh agent asks its host every second and gives up after 5 unanswered asks
# (tests/cluster/rsh), well before the ranks' peer timeout (30 s here, the default). Once node2's
# link is down, mpirun exits within 20 s with a non-zero status and the agent's line naming node2;
# nothing of the run is left anywhere: no scalebench or orted on node1 or node2, no rsh agent.
# (Open MPI 4.1's mpirun does not end when the ranks end first, by exit 7 or MPI_Abort: it waits
# for the lost daemon; test_host_lost.sh covers the ranks' side with the agent's asking off.)
set -euo pipefail
. "${SCALEBENCH_SOURCE_DIR:?}/tests/cluster/testing.sh"
cluster_up --hosts 2
export SCALEBENCH_PEER_TIMEOUT=30 SCALEBENCH_CLUSTER_ALIVE_INTERVAL=1 SCALEBENCH_CLUSTER_ALIVE_COUNT_MAX=5
bridge=$(sed -n 's/.* bridge=\([^ ]*\) .*/\1/p' "$cluster/links")
[ -n "$bridge" ] || fail "no bridge named in $cluster/links"
node2_addr=$(cluster_host "$cluster" node2 | awk '{ print $2 }')
# Long enough to be cut mid-run: 2e11 samples take minutes on one core.
"$mpiexec" --hostfile "$cluster/hostfile" -np 4 --map-by ppr:2:node --bind-to none -x SCALEBENCH_PEER_TIMEOUT \
  "$bin" montecarlo --problem pi --samples 2e11 --threads 1 --reps 1 --warmup 0 --quiet \
  --json "$work/lost.json" >"$work/out.txt" 2>&1 &
job=$!
wait_for_rank_on node2 "$job" || { stop_job "$job"; cat "$work/out.txt"; fail "no rank started on node2 while the job ran"; }
sleep 3  # past start-up and the watchdog's exchange, into the samples
kill -0 "$job" 2>/dev/null || { cat "$work/out.txt"; fail "the job ended before the link was cut"; }
ip link set "$bridge-2" down
t0=$(date +%s.%N)
for _ in $(seq 1 200); do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
mpirun_s=$(seconds_since "$t0")
if kill -0 "$job" 2>/dev/null; then
  stop_job "$job"
  cat "$work/out.txt"
  fail "mpirun still ran 20 s after node2's link was cut"
fi
rc=0
wait "$job" || rc=$?
cat "$work/out.txt"
[ "$rc" != 0 ] || fail "mpirun exited 0 after a host was lost"
grep -q "^tests/cluster/rsh: host node2 ($node2_addr) did not answer for 5 s; closing its session$" "$work/out.txt" ||
  fail "no line from the agent naming node2"
# The agents end with mpirun (node1's when its orted ends, node2's having given up); the ranks
# on node2, cut off, end with their session or by their own watchdog.
for _ in $(seq 1 100); do
  [ -z "$(host_pids node1 scalebench)$(host_pids node1 orted)$(host_pids node2 scalebench)$(host_pids node2 orted)$(agent_pids)" ] && break
  sleep 0.1
done
[ -z "$(host_pids node1 scalebench)$(host_pids node1 orted)" ] || fail "processes left on node1"
[ -z "$(host_pids node2 scalebench)$(host_pids node2 orted)" ] || fail "processes left on node2"
[ -z "$(agent_pids)" ] || fail "rsh agents left: $(agent_pids)"
[ ! -f "$work/lost.json" ] || check 'import json, sys; assert not json.load(open(sys.argv[1]))["ok"]' "$work/lost.json"
echo "cluster: node2's link cut; mpirun ended ${mpirun_s} s later (exit $rc) with the agent's line naming node2; nothing left on either host, no agent left"
