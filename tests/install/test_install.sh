#!/usr/bin/env bash
# `cmake --install` into a temporary prefix, as a cluster user installs tools:
#   test_install.sh BUILD prefix   P/bin/scalebench, the study files, the sbatch scripts and the
#                                  docs are there; the installed binary runs (--help, a tiny
#                                  2-rank gemm) from any folder
#   test_install.sh BUILD sbatch   under a real localhost Slurm, the installed study.sbatch,
#                                  submitted from an empty folder with only the installed
#                                  scalebench on PATH, finds it and its default study
#                                  (skips, with the reason, where Slurm cannot start)
set -euo pipefail
src="${SCALEBENCH_SOURCE_DIR:?}"; build="$1"; part="$2"
mpiexec="${SCALEBENCH_MPIEXEC:-mpirun}"
work=$(mktemp -d /tmp/scalebench-install.XXXXXX)
cleanup() { [ "$part" = sbatch ] && "$src/tests/slurm/localhost_slurm.sh" stop "$work/slurm"; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$work"/run/*.out; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done; exit 1; }
p="$work/prefix"
cmake --install "$build" --prefix "$p" >"$work/install.log" 2>&1 || { cat "$work/install.log"; fail "cmake --install failed"; }
mkdir -p "$work/run"
cd "$work/run"
export PATH="$p/bin:$PATH:/usr/sbin"
[ "$(command -v scalebench)" = "$p/bin/scalebench" ] || fail "the installed scalebench is not first on PATH"

if [ "$part" = prefix ]; then
  for f in bin/scalebench share/scalebench/slurm/study.sbatch share/scalebench/slurm/contrast.sbatch \
           share/scalebench/slurm/gpu-study.sbatch; do
    [ -x "$p/$f" ] || fail "$f not installed (executable)"
  done
  for f in "$src"/jobs/*.yaml; do [ -f "$p/share/scalebench/jobs/$(basename "$f")" ] || fail "jobs/$(basename "$f") not installed"; done
  for f in share/scalebench/slurm/sbatch-common.sh share/doc/scalebench/README.md share/doc/scalebench/cluster.md; do
    [ -f "$p/$f" ] || fail "$f not installed"
  done
  scalebench --help >"$work/help.txt" || fail "scalebench --help failed"
  grep -q "contrast" "$work/help.txt" || fail "--help lists no subcommands"
  "$mpiexec" -np 2 scalebench gemm --n 64 --reps 1 --warmup 0 --threads 1 --quiet --json "$work/g.json" ||
    fail "the installed scalebench could not run a 2-rank gemm"
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["ok"] and r["ranks"] == 2, r["ok"]' "$work/g.json" ||
    fail "the installed gemm record is not ok"
  echo "install: bin, jobs, slurm scripts and docs under the prefix; the installed binary runs"
  exit 0
fi

set +e
out=$("$src/tests/slurm/localhost_slurm.sh" start "$work/slurm")
rc=$?
set -e
if [ "$rc" = 77 ]; then echo "$out"; exit 77; fi
[ "$rc" = 0 ] || { echo "$out"; fail "the localhost Slurm did not start"; }
export SLURM_CONF="$work/slurm/slurm.conf"
unset SCALEBENCH STUDY
timeout 300 sbatch --wait --quiet --output="$work/run/study.out" "$p/share/scalebench/slurm/study.sbatch" ||
  fail "the installed study.sbatch failed (exit $?)"
grep -q "scalebench is $p/bin/scalebench" "$work/run/study.out" || fail "the job did not use the installed binary"
grep -q "scalebench study $p/share/scalebench/jobs/smoke.yaml" "$work/run/study.out" || fail "the job did not find the installed smoke.yaml"
python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert len(lines) == 2 and all(l["status"] == "ok" and l["command"].startswith("srun ") for l in lines), lines
assert all(sys.argv[2] in l["command"] for l in lines), [l["command"] for l in lines]
' "$work/run/results/smoke/runs.jsonl" "$p/bin/scalebench" || fail "the study's runs are not ok srun steps of the installed binary"
echo "install: the installed study.sbatch found the installed scalebench and smoke.yaml under a real Slurm"
