#!/usr/bin/env bash
# Under an N-node Slurm on the test cluster (tests/cluster/start --slurm): an sbatch -N 2 job runs
# gemm across 2 nodes with srun (also --distribution shared, 2 ranks a node: one B per node);
# slurm/contrast.sbatch in a 2-node allocation runs the multinode row, as srun steps across the
# nodes, and says which PMI type its steps use.
#   test_slurm.sh pmix   MpiDefault=pmix (or none where Slurm has no pmix plugin)
#   test_slurm.sh none   MpiDefault=none, the PMIx-less trap: the sbatch script chooses pmix
#                        itself; with SLURM_MPI_TYPE=none given the job fails, showing why
set -euo pipefail
. "${SCALEBENCH_SOURCE_DIR:?}/tests/cluster/testing.sh"
trap_case="$1"
if [ "$trap_case" = none ]; then cluster_up --hosts 2 --slurm --mpi-default none; else cluster_up --hosts 3 --slurm; fi
cd "$work"
show() { for f in "$work"/*.out; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done; }
small=(--n 128 --naive-n 64 --samples 1e6 --naive-samples 1e5 --reps 1 --warmup 0)
contrast() {  # contrast NAME [ENV...]: slurm/contrast.sbatch in a 2-node allocation
  local name="$1"
  shift
  timeout 300 sbatch -N 2 --wait --quiet --chdir="$work" --output="$work/$name.out" \
    --export="ALL,SCALEBENCH=$bin,SCALEBENCH_ARGS=${small[*]} --json $work/$name.json${1:+,$1}" \
    "$src/slurm/contrast.sbatch"
}
check_contrast() {  # the multinode rows ran ok, as srun steps across 2 distinct nodes
  check '
import json, sys
c = json.load(open(sys.argv[1]))
assert c["ok"] and c["launcher"] == "srun", c["ok"]
rows = {(r["workload"], r["mode"]): r for r in c["runs"]}
for w in ("gemm", "montecarlo"):
    r = rows[(w, "multinode")]
    assert r["status"] == "ok" and r["command"].startswith("srun --nodes=2 "), r
    rec = json.load(open(r["record"]))  # the run record, relative to the submit folder
    hosts = [i["host"] for i in rec["rank_info"]]
    assert rec["ok"] and rec["ranks"] == 2 and len(set(hosts)) == 2, hosts
' "$1"
}

srun --mpi=list 2>&1 | grep -qw pmix ||
  { echo "Skipped: this Slurm has no pmix plugin (srun --mpi=list): Open MPI cannot start under its srun"; exit 77; }
if [ "$trap_case" = none ]; then
  grep -qx MpiDefault=none "$SLURM_CONF" || fail "the cluster's Slurm should default to MpiDefault=none"
  # The trap avoided: no SLURM_MPI_TYPE given, the script picks pmix and says so.
  contrast chosen || { rc=$?; show; fail "contrast.sbatch under MpiDefault=none failed (exit $rc)"; }
  grep -q "srun steps use --mpi=pmix" "$work/chosen.out" || { show; fail "the job does not say it chose pmix"; }
  check_contrast "$work/chosen.json"
  # The trap sprung on purpose: SLURM_MPI_TYPE=none is respected, the job fails and the launcher's
  # real error (Open MPI cannot start without PMI) is shown: in the job output or the run's log.
  rc=0
  contrast forced SLURM_MPI_TYPE=none || rc=$?
  [ "$rc" != 0 ] || { show; fail "the contrast with SLURM_MPI_TYPE=none should fail"; }
  grep -q "srun steps use --mpi=none" "$work/forced.out" || { show; fail "the job does not say it uses --mpi=none"; }
  grep -rqE "OPAL ERROR|PMI support" "$work/forced.out" "$work/results" ||
    { show; fail "the launcher's error is neither in the job output nor in the run logs"; }
  echo "cluster slurm (MpiDefault=none): the sbatch script chose pmix and the multinode rows ran; SLURM_MPI_TYPE=none failed (exit $rc) with the launcher's error shown"
  exit 0
fi

# gemm across 2 nodes: one srun step in an sbatch -N 2 job.
cat >"$work/gemm.sbatch" <<JOB
#!/usr/bin/env bash
set -euo pipefail
srun -N 2 -n 2 --ntasks-per-node=1 "$bin" gemm --n 256 --reps 1 --warmup 0 --threads 1 --verify full --quiet --json "$work/gemm.json"
srun --overcommit -N 2 -n 4 --ntasks-per-node=2 "$bin" gemm --m 37 --n 29 --k 31 --fill integer --distribution shared --reps 1 \
  --warmup 0 --threads 1 --verify full --quiet --json "$work/shared.json"
JOB
timeout 300 sbatch -N 2 --wait --quiet --chdir="$work" --output="$work/gemm.out" "$work/gemm.sbatch" ||
  { rc=$?; show; fail "the gemm job failed (exit $rc)"; }
check '
import json, sys
r = json.load(open(sys.argv[1]))
hosts = [i["host"] for i in r["rank_info"]]
assert r["ok"] and r["ranks"] == 2 and len(set(hosts)) == 2, (r["ok"], hosts)
assert set(hosts) <= {"node1", "node2", "node3"}, hosts
assert "SLURM_JOB_ID" in r["slurm"] and "SLURM_STEP_ID" in r["slurm"], r["slurm"]
' "$work/gemm.json"
check '
import json, sys
r = json.load(open(sys.argv[1]))
dist = r["distribution"]
assert r["ok"] and r["ranks"] == 4 and dist["scheme"] == "shared" and not r["warnings"], (r["ok"], dist, r["warnings"])
mem = dist["host_memory_per_node"]
assert len(mem) == 2 and all(m["b_copies"] == 1 and m["ranks"] == 2 for m in mem), mem
' "$work/shared.json"
contrast contrast || { rc=$?; show; fail "contrast.sbatch -N 2 failed (exit $rc)"; }
check_contrast "$work/contrast.json"
echo "cluster slurm: gemm across 2 nodes by srun in an sbatch -N 2 job (replicated, and shared: one B per node); contrast.sbatch ran its multinode rows"
