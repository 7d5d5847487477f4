#!/usr/bin/env bash
# gemm --distribution shared across 2 hosts of the test cluster: 2 ranks per host, placed by
# slot (ranks 0,1 | 2,3) and round-robin (ranks 0,2 | 1,3: a node's rows are not contiguous),
# uneven rows, integer fill, MPI messages cut in chunks of 50 elements. Both schemes must give the exact product (--verify full, worst
# error 0); the shared record must hold one B per host, broadcast B once between the hosts,
# copy nothing inside a host, and move only the other host's rows of A and C across. Then the
# MPI test program of the distribution (tests/mpi/test_gemm_distribution.cpp: C bit for bit the
# replicated scheme's and the exact product, the record, the fallback) on the same 2 hosts,
# placed round-robin.
set -euo pipefail
. "${SCALEBENCH_SOURCE_DIR:?}/tests/cluster/testing.sh"
cluster_up --hosts 2
run() {  # run NAME MAP ARGS...: 4 ranks, 2 per host
  local name="$1" map="$2"
  shift 2
  timeout 120 "$mpiexec" --hostfile "$cluster/hostfile" -np 4 --map-by "$map" --bind-to none \
    "$bin" gemm --m 37 --n 29 --k 31 --fill integer --reps 2 --warmup 0 --threads 1 --verify full --quiet --mpi-chunk 50 \
    --json "$work/$name.json" "$@" || fail "$name: $* (exit $?)"
}
for map in ppr:2:node node; do
  tag=${map//:/_}
  run "replicated_$tag" "$map" --distribution replicated
  run "shared_$tag" "$map" --distribution shared
done
# B of 769 x 767 doubles (4.7 MB): two lanes, each host's rank j carrying the j-th slice (uneven:
# 294912 and 294911 elements); by slot and round-robin (where rank 0's node holds ranks 0 and 2).
for map in ppr:2:node node; do
  tag=${map//:/_}
  timeout 120 "$mpiexec" --hostfile "$cluster/hostfile" -np 4 --map-by "$map" --bind-to none \
    "$bin" gemm --m 37 --n 767 --k 769 --fill integer --reps 2 --warmup 0 --threads 1 --verify full --quiet \
    --distribution shared --json "$work/lanes_$tag.json" || fail "lanes_$tag (exit $?)"
done
timeout 120 "$bin" gemm --m 37 --n 767 --k 769 --fill integer --reps 1 --warmup 0 --threads 1 --verify full --quiet \
  --json "$work/lanes_one.json" || fail "lanes_one (exit $?)"
# Round-robin: each host's rows are not contiguous, the harder layout.
timeout 120 "$mpiexec" --hostfile "$cluster/hostfile" -np 4 --map-by node --bind-to none \
  "${SCALEBENCH_DISTRIBUTION_TEST:?}" || fail "test_gemm_distribution on 2 hosts, round-robin (exit $?)"
check '
import json, sys
d = sys.argv[1]
for tag in ("ppr_2_node", "node"):
    rep = json.load(open(f"{d}/replicated_{tag}.json"))
    sh = json.load(open(f"{d}/shared_{tag}.json"))
    for rec in (rep, sh):
        assert rec["ok"] and rec["verification"]["full"]["worst_ratio"] == 0, (tag, rec["verification"])
    hosts = [i["host"] for i in sh["rank_info"]]
    assert len(set(hosts)) == 2, hosts
    dist = sh["distribution"]
    assert dist["scheme"] == "shared" and not sh["warnings"], (dist["scheme"], sh["warnings"])
    mem = dist["host_memory_per_node"]
    assert len(mem) == 2 and all(m["b_copies"] == 1 and m["ranks"] == 2 for m in mem), mem
    moved = dist["bytes_moved"]
    rows = sh["partition"]["rows_per_rank"]
    remote = sum(r for r, h in zip(rows, hosts) if h != hosts[0])
    assert moved["broadcast"]["inter_node_bytes"] == 29 * 31 * 8, moved
    assert moved["scatter"]["inter_node_bytes"] == remote * 31 * 8, (moved, remote)
    assert moved["gather"]["inter_node_bytes"] == remote * 29 * 8, (moved, remote)
    assert all(moved[p]["intra_node_bytes"] == 0 for p in moved), moved
    assert rep["distribution"]["host_memory_per_node"][0]["b_copies"] == 2, rep["distribution"]
    assert dist["b_lanes"] == 1 and "1 lane, the node leaders" in sh["network"]["model"], (dist["b_lanes"], sh["network"])
one = json.load(open(f"{d}/lanes_one.json"))
for tag in ("ppr_2_node", "node"):
    rec = json.load(open(f"{d}/lanes_{tag}.json"))
    dist = rec["distribution"]
    assert rec["ok"] and rec["verification"]["full"]["worst_ratio"] == 0, (tag, rec["verification"])
    assert rec["verification"]["c_digest"] == one["verification"]["c_digest"], (tag, rec["verification"], one["verification"])
    assert dist["scheme"] == "shared" and dist["b_lanes"] == 2, (tag, dist["scheme"], dist.get("b_lanes"))
    assert "on 2 lanes at once" in rec["network"]["model"], rec["network"]["model"]
    hosts = [i["host"] for i in rec["rank_info"]]
    mine = [r for r in range(4) if hosts[r] == hosts[0]]
    other = [r for r in range(4) if hosts[r] != hosts[0]]
    assert mine[0] == 0 and len(mine) == 2 and len(other) == 2, hosts
    slices = [294912 * 8, 294911 * 8]
    received = dist["bytes_per_rank"]["broadcast"]
    assert [received[r] for r in other] == slices and all(received[r] == 0 for r in mine), (tag, received, hosts)
    # Each lane: rank j of the first host sends slice j (rank 0 also its rows of A); rank j of the
    # other host receives it.
    rows = rec["partition"]["rows_per_rank"]
    sent = rec["distribution"]["communication"]["bytes_sent_per_rank"]
    got = rec["distribution"]["communication"]["bytes_received_per_rank"]
    a_out = sum(rows[r] for r in other) * 769 * 8
    assert sent[mine[0]] == slices[0] + a_out and sent[mine[1]] == slices[1], (tag, sent, rows, hosts)
    assert got[other[0]] == slices[0] + a_out and got[other[1]] == slices[1], (tag, got, rows, hosts)
    assert rec["network"]["phases"]["broadcast"]["inter_node_bytes"] == 769 * 767 * 8, rec["network"]["phases"]
' "$work"
echo "cluster: --distribution shared exact and bit-identical to replicated on 2 hosts (by slot and round-robin); one B per host, only leaders talk for a small B, a large one on 2 lanes"
