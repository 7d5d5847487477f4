#!/usr/bin/env bash
# Summa2D across 4 hosts of the test cluster (tests/cluster/start), one rank per host, mpirun with
# the cluster's hostfile, TCP over the shaped bridge: on integer fill with uneven blocks (a 2x2
# grid, several k-panels) C is bit-identical to Row1D's on the same hosts (the records'
# c_digest) and passes --verify full; the ranks ran on 4 distinct hosts; the bytes each rank
# received through the transport are the layout's (scatter + broadcast per rank).
set -euo pipefail
. "${SCALEBENCH_SOURCE_DIR:?}/tests/cluster/testing.sh"
cluster_up --hosts 4 --slots 1
run() {  # run ALGORITHM ARGS...: 4 ranks, one per host
  local alg="$1" rc=0
  shift
  timeout 180 "$mpiexec" --hostfile "$cluster/hostfile" -np 4 --map-by ppr:1:node --bind-to none \
    "$bin" gemm --m 203 --n 157 --k 181 --fill integer --algorithm "$alg" "$@" --reps 2 --warmup 1 --threads 1 \
    --verify full --quiet --json "$work/$alg.json" >"$work/$alg.out" 2>&1 || rc=$?
  [ "$rc" = 0 ] || { cat "$work/$alg.out"; fail "gemm --algorithm $alg on 4 hosts failed (exit $rc)"; }
}
run row1d
run summa2d --panel-width 32
check '
import json, sys
d = sys.argv[1]
row, summa = (json.load(open(f"{d}/{a}.json")) for a in ("row1d", "summa2d"))
for rec in (row, summa):
    hosts = [i["host"] for i in rec["rank_info"]]
    assert rec["ok"] and rec["verification"]["full"]["ok"], rec["verification"]
    assert rec["nodes"] == 4 and sorted(hosts) == ["node1", "node2", "node3", "node4"], hosts
assert summa["distribution"]["grid"] == [2, 2] and summa["distribution"]["panels"] > 4, summa["distribution"]
assert row["verification"]["c_digest"] == summa["verification"]["c_digest"], (row["verification"], summa["verification"])
for rec in (row, summa):
    dist = rec["distribution"]
    got = dist["communication"]["bytes_received_per_rank"]
    for q in range(1, 4):
        want = dist["bytes_per_rank"]["scatter"][q] + dist["bytes_per_rank"]["broadcast"][q]
        assert got[q] == want, (rec["distribution"]["algorithm"], q, got, want)
    assert dist["communication"]["seconds"]["median_s"] > 0, dist["communication"]
' "$work"
echo "cluster summa2d: 4 hosts, grid 2x2, C bit-identical to row1d (c_digest), --verify full passed, bytes per rank as the layout says"
