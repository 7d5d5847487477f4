#!/usr/bin/env bash
# A host that disappears mid-run (its link taken down) ends the run's ranks within the peer timeout
# plus a margin, on both sides: every rank (2 per host) exits 7 (timeout); the remaining host's
# node leader prints one line naming the silent host and its ranks (the cut-off host's leader says
# its own link is down); no scalebench or orted is left on the host that remains. Before that, a
# healthy run of several timeouts is not ended. scalebench is launched by a plain mpirun (no
# driver); each rank runs under a shell that records its exit code. The rsh agent's asking is off
# here (SCALEBENCH_CLUSTER_ALIVE_INTERVAL=0, as ssh without ServerAliveInterval): this is the
# ranks' side alone. Open MPI 4.1's mpirun itself then waits for the unreachable host's daemon
# (docs/cluster.md): the test reports whether it ended and stops it. test_host_lost_mpirun.sh
# covers mpirun ending through its agent.
set -euo pipefail
. "${SCALEBENCH_SOURCE_DIR:?}/tests/cluster/testing.sh"
cluster_up --hosts 2
# First a healthy run of 3.5 s (idle machine) to 20 s (loaded) with a 1 s timeout (heartbeats
# every 0.25 s): the watchdog must not fire while the ranks compute without a word of MPI.
SCALEBENCH_PEER_TIMEOUT=1 timeout 200 "$mpiexec" --hostfile "$cluster/hostfile" -np 4 --map-by ppr:2:node \
  --bind-to none -x SCALEBENCH_PEER_TIMEOUT "$bin" montecarlo --problem pi --samples 1e10 --threads 1 --reps 1 \
  --warmup 0 --quiet --json "$work/healthy.json" >"$work/healthy.txt" 2>&1 ||
  { cat "$work/healthy.txt"; fail "a healthy run with SCALEBENCH_PEER_TIMEOUT=1 failed"; }
check 'import json, sys; r = json.load(open(sys.argv[1])); assert r["ok"] and r["nodes"] == 2, (r["ok"], r["nodes"])' "$work/healthy.json"
healthy_s=$(python3 -c 'import json, sys; print(round(json.load(open(sys.argv[1]))["phases"]["end_to_end"]["median_s"], 1))' "$work/healthy.json")
export SCALEBENCH_PEER_TIMEOUT=10 RCDIR="$work" SCALEBENCH_CLUSTER_ALIVE_INTERVAL=0
bridge=$(sed -n 's/.* bridge=\([^ ]*\) .*/\1/p' "$cluster/links")
[ -n "$bridge" ] || fail "no bridge named in $cluster/links"
# Long enough to be cut mid-run: 2e11 samples take minutes on one core.
# shellcheck disable=SC2016 # expanded by the rank's shell
"$mpiexec" --hostfile "$cluster/hostfile" -np 4 --map-by ppr:2:node --bind-to none \
  -x SCALEBENCH_PEER_TIMEOUT -x RCDIR sh -c '
    r=$OMPI_COMM_WORLD_RANK
    [ "$r" -ge 2 ] && exec 2>"$RCDIR/err.$r"
    "$0" "$@"; rc=$?; echo "$rc" >"$RCDIR/rc.$r"; exit "$rc"' \
  "$bin" montecarlo --problem pi --samples 2e11 --threads 1 --reps 1 --warmup 0 --quiet \
  --json "$work/lost.json" >"$work/out.txt" 2>&1 &
job=$!
wait_for_rank_on node2 "$job" || { stop_job "$job"; cat "$work/out.txt"; fail "no rank started on node2 while the job ran"; }
sleep 3  # past start-up and the watchdog's exchange, into the samples
kill -0 "$job" 2>/dev/null || { cat "$work/out.txt"; fail "the job ended before the link was cut"; }
# node2's end of the bridge (tests/cluster/start names it BRIDGE-2): node2 falls silent.
ip link set "$bridge-2" down
t0=$(date +%s.%N)
ranks_done() { for r in 0 1 2 3; do [ -f "$work/rc.$r" ] || return 1; done; }
# Both ranks end by themselves: the timeout (10 s), a heartbeat period, a margin.
for _ in $(seq 1 200); do
  ranks_done && break
  sleep 0.1
done
ranks_s=$(seconds_since "$t0")
if ! ranks_done; then
  stop_job "$job"
  cat "$work/out.txt"
  fail "the ranks still ran 20 s after node2's link was cut"
fi
# mpirun tears the job down on node1, which it still reaches.
for _ in $(seq 1 100); do
  [ -z "$(host_pids node1 scalebench)$(host_pids node1 orted)" ] && grep -q 'sent nothing' "$work/out.txt" && break
  sleep 0.1
done
left1="$(host_pids node1 scalebench)$(host_pids node1 orted)"
left2="$(host_pids node2 scalebench)"
mpirun_ended=no
kill -0 "$job" 2>/dev/null || mpirun_ended=yes
stop_job "$job"
wait "$job" 2>/dev/null || true
cat "$work/out.txt"
echo "node2's stderr:"
cat "$work/err.2" "$work/err.3" || true
for r in 0 1 2 3; do
  [ "$(cat "$work/rc.$r")" = 7 ] || fail "rank $r exited $(cat "$work/rc.$r"), not 7 (timeout)"
done
[ "$(grep -c '^scalebench: error: ' "$work/out.txt")" = 1 ] || fail "not exactly one error line from scalebench"
grep -qx 'scalebench: error: host node2 (ranks 2-3) sent nothing for 10 s; ending the run' "$work/out.txt" ||
  fail "no line naming node2 as the silent host"
grep -qx 'scalebench: error: host node1 (ranks 0-1) sent nothing for 10 s; ending the run (the network link of this host, node2, is down)' "$work/err.2" ||
  fail "node2's leader (rank 2) did not say that its own link is down"
[ ! -s "$work/err.3" ] || fail "node2's second rank printed: $(cat "$work/err.3")"
[ -z "$left1" ] || fail "processes left on node1: $left1"
[ -z "$left2" ] || fail "scalebench left on node2: $left2"
[ ! -f "$work/lost.json" ] || check 'import json, sys; assert not json.load(open(sys.argv[1]))["ok"]' "$work/lost.json"
python3 -c "import sys; assert float(sys.argv[1]) <= 20, sys.argv[1]" "$ranks_s" || fail "ranks ended after ${ranks_s} s"
echo "cluster: a healthy run (${healthy_s} s, timeout 1 s) was not ended; node2's link cut; all 4 ranks ended ${ranks_s} s later with exit 7, node2 named; nothing left on node1 (mpirun ended by itself: $mpirun_ended)"
