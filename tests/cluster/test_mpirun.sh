#!/usr/bin/env bash
# gemm and montecarlo across 2 and 3 hosts of the test cluster (tests/cluster/start), launched by
# mpirun with the cluster's hostfile and rsh agent, TCP over the bridge: results verified, the
# record's hosts distinct, the Monte Carlo estimate bit-identical to a 1-rank run.
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
' "$work"
echo "cluster: gemm and montecarlo verified across 2 and 3 hosts; the estimate equals the 1-rank run's bits"
