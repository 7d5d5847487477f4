#!/usr/bin/env bash
# gemm --distribution shared on 2 hosts of the test cluster where only the second host's
# /dev/shm (its own 64 MiB tmpfs, in its own mount namespace) cannot hold that host's windows:
# each host checks its own backing folder, and every rank of both hosts falls back to replicated
# together (exit 0, no hang), the warning naming node2 and its figures, the product exact. A run
# small enough for node2's /dev/shm still uses shared windows on both hosts.
set -euo pipefail
. "${SCALEBENCH_SOURCE_DIR:?}/tests/cluster/testing.sh"
cluster_up --hosts 2
cluster_enter "$cluster" node2 mount -t tmpfs -o size=64m tmpfs /dev/shm ||
  fail "could not mount a 64 MiB tmpfs on node2's /dev/shm"
run() { # run NAME ARGS...: 4 ranks, 2 per host (node1: ranks 0 and 1)
  local name="$1"
  shift
  timeout -k 10 240 "$mpiexec" --hostfile "$cluster/hostfile" -np 4 --map-by ppr:2:node --bind-to none \
    "$bin" gemm --fill integer --reps 1 --warmup 0 --threads 1 --verify full --no-peer --distribution shared \
    --json "$work/$name.json" "$@" >"$work/$name.out" 2>&1 || fail "$name: exit $? ($(cat "$work/$name.out"))"
}
# node2 holds its 2048 rows of C (64 MiB) and B: more than its 64 MiB /dev/shm; node1 has room.
run big --m 4096 --n 4096 --k 64
# Small: fits node2's /dev/shm.
run small --m 37 --n 29 --k 31
grep -q "warning: --distribution shared fell back to replicated: .*/dev/shm .* on node2 has .* free, but" "$work/big.out" ||
  fail "big: the table's warning does not name node2's /dev/shm: $(cat "$work/big.out")"
check '
import json, sys
d = sys.argv[1]
big = json.load(open(f"{d}/big.json"))
small = json.load(open(f"{d}/small.json"))
for rec in (big, small):
    assert rec["ok"] and rec["verification"]["full"]["worst_ratio"] == 0, rec["verification"]
    assert len(set(i["host"] for i in rec["rank_info"])) == 2, rec["rank_info"]
dist = big["distribution"]
assert dist["scheme"] == "replicated" and dist["requested_scheme"] == "shared", dist["scheme"]
w = dist["warning"]
assert "/dev/shm" in w and "on node2 has" in w and "need" in w and "node1" not in w, w
assert small["distribution"]["scheme"] == "shared" and not small["warnings"], small["warnings"]
' "$work"
echo "cluster: --distribution shared falls back on every rank when one host's /dev/shm is too small, naming that host; a run that fits stays shared"
