#!/usr/bin/env bash
# The drivers across the hosts of the test cluster (tests/cluster/start), by mpirun, no Slurm:
# `scalebench contrast --hostfile` runs its multinode rows on 2 distinct hosts (nodes=2) and its
# one-node rows on the first host; a study with a `nodes` sweep (1 and 2 nodes, 1 rank per node,
# hosts from the file's `hostfile` key) shows nodes and the 2-node run's speed-up, and that run's
# gemm record says the broadcast crossed the network (inter-node bytes) with its bare MPI_Bcast
# and MPI_Scatterv peer beside it; the 1-node run moved nothing between nodes.
set -euo pipefail
. "${SCALEBENCH_SOURCE_DIR:?}/tests/cluster/testing.sh"
cluster_up --hosts 2 --slots 2
cd "$work"

# contrast: the one-node rows run on node1, the multinode rows on both hosts. The hosts of this
# cluster are given no GPUs of their own (no --gpus-per-host: on a GPU machine they would all share
# its GPUs, which the runs refuse), so the contrast is shown none either: its rows are CPU rows on
# every machine (GPU hosts: test_gpu.sh).
CUDA_VISIBLE_DEVICES="" timeout 240 "$bin" contrast --hostfile "$cluster/hostfile" --modes single-core,multinode \
  --n 128 --samples 1e6 --reps 1 --warmup 0 --timeout 120 --out-dir "$work/contrast" --json "$work/contrast.json" \
  >"$work/contrast.out" 2>&1 || { rc=$?; cat "$work/contrast.out"; fail "contrast --hostfile failed (exit $rc)"; }
check '
import json, sys
c = json.load(open(sys.argv[1]))
assert c["ok"] and c["launcher"] == "mpirun", (c["ok"], c["launcher"])
rows = {(r["workload"], r["mode"]): r for r in c["runs"]}
for w in ("gemm", "montecarlo"):
    r = rows[(w, "multinode")]
    assert r["status"] == "ok" and "--hostfile" in r["command"], r
    rec = json.load(open(r["record"]))
    hosts = {i["host"] for i in rec["rank_info"]}
    assert rec["ok"] and hosts == {"node1", "node2"}, (w, rec["ok"], hosts)
    assert rec["nodes"] == 2 and rec["ranks"] == 2 * rec["ranks_per_node"], (w, rec["nodes"], rec["ranks"])
    one = json.load(open(rows[(w, "single-core")]["record"]))
    assert one["ok"] and one["nodes"] == 1 and [i["host"] for i in one["rank_info"]] == ["node1"], (w, one["rank_info"])
' "$work/contrast.json" || { cat "$work/contrast.out"; exit 1; }

# study: a nodes sweep across the two hosts.
cat >"$work/nodes.yaml" <<YAML
study: nodes
workload: gemm
args: {n: 256, backend: openblas, threads: 1, reps: 1, warmup: 0}
sweep:
  nodes: [1, 2]
  ranks_per_node: [1]
hostfile: $cluster/hostfile
timeout_s: 120
YAML
timeout 240 "$bin" study "$work/nodes.yaml" --out-dir "$work/study" >"$work/study.out" 2>&1 ||
  { rc=$?; cat "$work/study.out"; fail "the nodes study failed (exit $rc)"; }
grep -qE '^ *# +nodes ' "$work/study.out" || { cat "$work/study.out"; fail "the study table has no nodes column"; }
check '
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
rows = {r["nodes"]: r for r in s["runs"]}
assert sorted(rows) == [1, 2], sorted(rows)
for n, r in rows.items():
    assert r["status"] == "ok" and r["ranks"] == n and r["ranks_per_node"] == 1, r
    rec = json.load(open(r["record_path"]))
    hosts = [i["host"] for i in rec["rank_info"]]
    assert rec["ok"] and rec["nodes"] == n and len(set(hosts)) == n, (n, hosts)
assert rows[2]["speedup"] > 0 and rows[2]["baseline_index"] == rows[1]["index"], rows[2]
cmds = {}
for line in open(sys.argv[1] + "/runs.jsonl"):
    run = json.loads(line)
    cmds[run["nodes"]] = run["command"]
assert "--hostfile" in cmds[2] and "--map-by ppr:1:node" in cmds[2] and "--host " in cmds[1], cmds
# The network section: the 2-node broadcast crossed the network, with its bare peers.
net = json.load(open(rows[2]["record_path"]))["network"]
b = net["phases"]["broadcast"]
assert b["inter_node_bytes"] == 256 * 256 * 8 and b["intra_node_bytes"] == 0 and b["crosses_network"], b
assert net["phases"]["scatter"]["inter_node_bytes"] > 0, net["phases"]["scatter"]
peers = net["peers"]
assert peers["broadcast"]["what"] == "MPI_Bcast" and peers["broadcast"]["bare"]["median_s"] > 0, peers
assert peers["broadcast"]["ratio_phase_vs_bare"] > 0 and peers["scatter"]["what"] == "MPI_Scatterv", peers
one = json.load(open(rows[1]["record_path"]))["network"]
assert one["phases"]["broadcast"]["inter_node_bytes"] == 0 and one["peers"] is None, one
' "$work/study" || { cat "$work/study.out"; exit 1; }
echo "cluster drivers: contrast --hostfile ran its multinode rows on node1 and node2; the nodes study ran 1 and 2 nodes (speed-up computed); the 2-node broadcast crossed the network beside its bare MPI_Bcast"
