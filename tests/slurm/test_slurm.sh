#!/usr/bin/env bash
# slurm/*.sbatch under a real Slurm started on this machine (tests/slurm/localhost_slurm.sh):
# the study and the contrast run inside an allocation with every run as its own srun step; a
# study that cannot start fails the job with scalebench's exit code. Skips (77, with the reason)
# where Slurm is not installed or cannot start.
set -euo pipefail
src="${SCALEBENCH_SOURCE_DIR:?}"; bin="${SCALEBENCH_BINARY:?}"
dir=$(mktemp -d /tmp/scalebench-slurm.XXXXXX)
work="$dir/work"; mkdir -p "$work"
cleanup() { "$src/tests/slurm/localhost_slurm.sh" stop "$dir/slurm" || true; rm -rf "$dir"; }
trap cleanup EXIT
set +e
out=$("$src/tests/slurm/localhost_slurm.sh" start "$dir/slurm")
rc=$?
set -e
if [ "$rc" = 77 ]; then echo "$out"; exit 77; fi
[ "$rc" = 0 ] || { echo "$out"; echo "FAIL: the localhost Slurm did not start"; exit 1; }
export SLURM_CONF="$dir/slurm/slurm.conf" PATH="$PATH:/usr/sbin"
fail() { echo "FAIL: $*"; for f in "$work"/*.out; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done; exit 1; }
check() { python3 -c "$1" "${@:2}" || fail "check failed: $1"; }

# 1. A study: two runs, srun steps of 1 and 2 ranks, inside the job.
cat > "$work/tiny.yaml" <<'YAML'
study: tiny
workload: montecarlo
args: {problem: pi, samples: 1e6, backend: cpu, threads: 1, reps: 1, warmup: 0}
sweep:
  ranks: [1, 2]
YAML
timeout 300 sbatch --wait --quiet --chdir="$work" --export="ALL,STUDY=$work/tiny.yaml,SCALEBENCH=$bin" \
  "$src/slurm/study.sbatch" || fail "study job failed (exit $?)"
check '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert len(lines) == 2, lines
for l, n in zip(lines, (1, 2)):
    assert l["status"] == "ok", l
    assert l["command"].startswith(f"srun -n {n} "), l["command"]
    r = l["record"]
    assert r["ranks"] == n and r["ok"], r
    assert "SLURM_JOB_ID" in r["slurm"] and "SLURM_STEP_ID" in r["slurm"], r["slurm"]
# the same estimate, to the bit, on 1 and 2 ranks
assert lines[0]["record"]["result"]["estimate"] == lines[1]["record"]["result"]["estimate"]
' "$work/results/tiny/runs.jsonl"
[ -f "$work/results/tiny/summary.md" ] || fail "no summary.md"

# 2. The contrast: the CPU modes as srun steps, the others skipped with their reason.
timeout 300 sbatch --wait --quiet --chdir="$work" --export="ALL,SCALEBENCH=$bin,SCALEBENCH_ARGS=--n 128 --naive-n 64 --samples 1e6 --naive-samples 1e5 --reps 1 --warmup 0 --json $work/contrast.json" \
  "$src/slurm/contrast.sbatch" || fail "contrast job failed (exit $?)"
check '
import json, sys
c = json.load(open(sys.argv[1]))
assert c["ok"] and c["launcher"] == "srun", c
rows = {(r["workload"], r["mode"]): r for r in c["runs"]}
for w in ("gemm", "montecarlo"):
    for m in ("naive", "single-core", "multi-thread"):
        r = rows[(w, m)]
        assert r["status"] == "ok" and r["command"].startswith("srun "), r
    assert rows[(w, "multinode")]["status"] == "skipped", rows[(w, "multinode")]
' "$work/contrast.json"

# 3. A study that cannot start: the job ends with scalebench's usage exit code (2), nothing run.
cat > "$work/bad.yaml" <<'YAML'
study: bad
workload: gemm
args: {n: 64, backend: nosuch}
YAML
set +e
timeout 300 sbatch --wait --quiet --chdir="$work" --export="ALL,STUDY=$work/bad.yaml,SCALEBENCH=$bin" "$src/slurm/study.sbatch"
rc=$?
set -e
[ "$rc" = 2 ] || fail "a bad study should end its job with exit code 2, got $rc"
[ ! -e "$work/results/bad/runs.jsonl" ] || fail "a bad study wrote runs.jsonl"
grep -q "cannot start" "$work"/scalebench-study-*.out || fail "the job's output does not say why"
echo "slurm: study, contrast and a failing study ran under a real localhost Slurm"
