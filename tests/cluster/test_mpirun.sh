#!/usr/bin/env bash
# gemm and montecarlo across 2 and 3 hosts of the test cluster (tests/cluster/start), launched by
# mpirun with the cluster's hostfile and rsh agent, TCP over the bridge: results verified, the
# record's hosts distinct, the Monte Carlo estimate bit-identical to a 1-rank run; the shared
# distribution's B relayed along the chain of 3 node leaders, and the replicated one's among 3 ranks a
# host each (the bytes each moves); with 2 ranks a host (round-robin) a larger B on 2 lanes, each
# along its own chain.
set -euo pipefail
. "${SCALEBENCH_SOURCE_DIR:?}/tests/cluster/testing.sh"
cluster_up --hosts 3
run() {  # run RANKS WORKLOAD ARGS...: one rank per host
  local ranks="$1"
  shift
  timeout 120 "$mpiexec" --hostfile "$cluster/hostfile" -np "$ranks" --map-by ppr:1:node --bind-to none \
    "$bin" "$@" --quiet || fail "$ranks ranks: $* (exit $?)"
}
for r in 2 3; do
  run "$r" gemm --n 256 --reps 1 --warmup 0 --threads 1 --verify full --json "$work/gemm$r.json"
  run "$r" montecarlo --problem pi --samples 2e6 --reps 1 --warmup 0 --threads 1 --json "$work/mc$r.json"
done
run 1 montecarlo --problem pi --samples 2e6 --reps 1 --warmup 0 --threads 1 --json "$work/mc1.json"
# B of 600 x 600 doubles (2.9 MB) among 3 node leaders: along the chain node1 -> node2 -> node3.
run 3 gemm --n 600 --reps 1 --warmup 0 --threads 1 --algorithm row1d --distribution shared --verify full \
  --json "$work/relay.json"
# Replicated with one rank a host: B relayed the same way.
run 3 gemm --n 600 --reps 1 --warmup 0 --threads 1 --algorithm row1d --distribution replicated --verify full \
  --json "$work/relay_replicated.json"
# 2 ranks a host placed round-robin (node1: ranks 0 and 3, node2: 1 and 4, node3: 2 and 5), B of
# 769 x 767 doubles (4.7 MB): two lanes, 0 -> 1 -> 2 and 3 -> 4 -> 5, each along its chain.
timeout 120 "$mpiexec" --hostfile "$cluster/hostfile" -np 6 --map-by node --bind-to none \
  "$bin" gemm --m 37 --n 767 --k 769 --fill integer --reps 1 --warmup 0 --threads 1 --algorithm row1d \
  --distribution shared --verify full --quiet --json "$work/lanes.json" || fail "6 ranks on 2 lanes (exit $?)"
timeout 120 "$bin" gemm --m 37 --n 767 --k 769 --fill integer --reps 1 --warmup 0 --threads 1 --verify full --quiet \
  --json "$work/lanes_one.json" || fail "lanes_one (exit $?)"
check '
import json, sys
d = sys.argv[1]
nodes = {"node1", "node2", "node3"}
for w in ("gemm", "mc"):
    for r in (2, 3):
        rec = json.load(open(f"{d}/{w}{r}.json"))
        assert rec["ok"] and rec["ranks"] == r, (w, r, rec["ok"], rec["ranks"])
        hosts = [i["host"] for i in rec["rank_info"]]
        assert len(set(hosts)) == r and set(hosts) <= nodes, (w, r, hosts)
        assert sorted(rec["hosts"]) == sorted(set(hosts)), (rec["hosts"], hosts)
one = json.load(open(f"{d}/mc1.json"))["result"]["estimate"]
for r in (2, 3):
    est = json.load(open(f"{d}/mc{r}.json"))["result"]["estimate"]
    assert est.hex() == one.hex(), (r, est, one)
# The relay: the middle leader forwards B and the last only receives it; each sends its rows of C
# and receives its rows of A.
rec = json.load(open(f"{d}/relay.json"))
assert rec["ok"] and rec["distribution"]["scheme"] == "shared", (rec["ok"], rec["distribution"]["scheme"])
rows = rec["partition"]["rows_per_rank"]
sent = rec["distribution"]["communication"]["bytes_sent_per_rank"]
received = rec["distribution"]["communication"]["bytes_received_per_rank"]
b = 600 * 600 * 8
row = 600 * 8  # a row of A or C
remote = (rows[1] + rows[2]) * row  # rank 0 sends their rows of A and receives their rows of C
assert sent == [b + remote, b + rows[1] * row, rows[2] * row], (sent, rows)
assert received == [remote, b + rows[1] * row, b + rows[2] * row], (received, rows)
assert "chain" in rec["network"]["model"], rec["network"]["model"]
rec = json.load(open(f"{d}/relay_replicated.json"))
assert rec["ok"] and rec["distribution"]["scheme"] == "replicated", rec["distribution"]["scheme"]
rows = rec["partition"]["rows_per_rank"]
sent = rec["distribution"]["communication"]["bytes_sent_per_rank"]
assert sent == [b + (rows[1] + rows[2]) * row, b + rows[1] * row, rows[2] * row], (sent, rows)
assert "relayed" in rec["network"]["model"], rec["network"]["model"]
# The lanes: each of ranks 3, 4 and 5 (rank 1 of its host) carries the second slice along the
# chain as ranks 0, 1 and 2 carry the first; C exactly that of the run on one rank.
rec, one = json.load(open(f"{d}/lanes.json")), json.load(open(f"{d}/lanes_one.json"))
assert rec["ok"] and rec["verification"]["full"]["worst_ratio"] == 0, rec["verification"]
assert rec["verification"]["c_digest"] == one["verification"]["c_digest"], (rec["verification"], one["verification"])
hosts = [i["host"] for i in rec["rank_info"]]
assert hosts[:3] == hosts[3:] and len(set(hosts)) == 3, hosts
dist = rec["distribution"]
assert dist["scheme"] == "shared" and dist["b_lanes"] == 2, (dist["scheme"], dist.get("b_lanes"))
rows = rec["partition"]["rows_per_rank"]
sent = dist["communication"]["bytes_sent_per_rank"]
got = dist["communication"]["bytes_received_per_rank"]
s0, s1 = 294912 * 8, 294911 * 8
a = [rows[r] * 769 * 8 for r in range(6)]
c = [rows[r] * 767 * 8 for r in range(6)]
# Rank 0 sends the other hosts their rows of A and slice 0; ranks 1 and 2 lead their hosts.
assert sent == [a[1] + a[4] + a[2] + a[5] + s0, s0 + c[1] + c[4], c[2] + c[5], s1, s1, 0], (sent, rows)
assert got == [c[1] + c[4] + c[2] + c[5], s0 + a[1] + a[4], s0 + a[2] + a[5], 0, s1, s1], (got, rows)
assert dist["bytes_per_rank"]["broadcast"] == [0, s0, s0, 0, s1, s1], dist["bytes_per_rank"]
assert "on 2 lanes at once" in rec["network"]["model"], rec["network"]["model"]
' "$work"
echo "cluster: gemm and montecarlo verified across 2 and 3 hosts; the estimate equals the 1-rank run's bits; B relayed along the chain of 3 leaders (shared) and of 3 ranks a host each (replicated), and on 2 lanes of 3 ranks each (shared, 2 ranks a host)"
