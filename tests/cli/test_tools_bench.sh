#!/usr/bin/env bash
# tools/bench_pi_numpy.py (the seeds' π in NumPy: its estimate, its record, its exit codes) and
# tools/bench's table, printed by `tools/bench --table` from records made here: the NumPy one by
# bench_pi_numpy.py itself, the others written by hand with round figures, so that every number
# the table prints is known. A record lacking a figure, or not JSON, is one line and exit 3.
# Skips (77) without a python3 that has NumPy.
set -euo pipefail
src="${SCALEBENCH_SOURCE_DIR:?}"
dir=$(mktemp -d "${SCALEBENCH_TEST_TMPDIR:-/tmp}/tools-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
python=""
for p in ${SCALEBENCH_PYTHON:-} python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c "import numpy" >/dev/null 2>&1; then python="$p"; break; fi
done
[ -n "$python" ] || { echo "no python3 with NumPy (tools/setup installs python3-numpy)"; exit 77; }
pi() { "$python" "$src/tools/bench_pi_numpy.py" "$@"; }

# The estimate: within 4 standard errors of π, the same on every repeat and for the same seed.
pi --samples 1e5 --batch 3e4 --reps 2 --seed 7 --json "$dir/a.json" >"$dir/a.log" || fail "exit $?: $(cat "$dir/a.log")"
pi --samples 1e5 --batch 3e4 --reps 1 --seed 7 --json "$dir/b.json" >/dev/null || fail "second run"
grep -q "^numpy pi: samples 100000  estimate 3\.1" "$dir/a.log" || fail "its line: $(cat "$dir/a.log")"
"$python" - "$dir/a.json" "$dir/b.json" <<'PY' || fail "its record: $(cat "$dir/a.json")"
import json, math, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a["samples"] == 100000 and len(a["times_s"]) == 2, a
assert abs(a["estimate"] - math.pi) <= 4 * a["std_error"] and abs(a["z"]) <= 4, a
assert math.isclose(a["std_error"], 4 * math.sqrt((a["estimate"] / 4) * (1 - a["estimate"] / 4) / 1e5)), a
assert a["estimate"] == b["estimate"], (a, b)   # a seed gives one estimate
assert a["samples_per_s"] > 0 and math.isclose(a["samples_per_s"], a["samples"] / a["median_s"]), a
PY
# One point is 0 or 4, never within 4 standard errors of π: exit 4, as scalebench's failed check.
code=0
pi --samples 1 --reps 1 >/dev/null || code=$?
[ "$code" = 4 ] || fail "one sample: exit $code"
for bad in "--samples 0" "--samples 1.5" "--samples x" "--reps 0"; do
  code=0
  # shellcheck disable=SC2086
  pi $bad >/dev/null 2>&1 || code=$?
  [ "$code" = 2 ] || fail "$bad: exit $code"
done

# The table from records with known figures (and the NumPy record above).
t="$dir/records"
mkdir "$t"
cp "$dir/a.json" "$t/pi-numpy.json"
numpy_rate=$("$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["samples_per_s"])' "$t/pi-numpy.json")
cat >"$t/gemm-openblas-np2.json" <<'J'
{"rates": {"compute_gflops": 40.0}, "peer": {"ratio_backend_vs_bare": 0.99}}
J
cat >"$t/pi-cpu-1core.json" <<'J'
{"rates": {"samples_per_s": 2.0e8}}
J
cat >"$t/pi-cpu-2ranks.json" <<'J'
{"rates": {"samples_per_s": 3.8e8}}
J
cat >"$t/pi-cpu-all.json" <<'J'
{"rates": {"samples_per_s": 4.0e8}, "config": {"threads_per_rank": 2}}
J
cat >"$t/gemm-multi-np1-overlap.json" <<'J'
{"config": {"n": 32768}, "phases": {"end_to_end": {"median_s": 4.0}, "compute": {"median_s": 3.0}},
 "gpu": {"overlap": {"hidden_fraction": 0.9}}}
J
cat >"$t/gemm-multi-np2-overlap.json" <<'J'
{"config": {"n": 32768}, "phases": {"end_to_end": {"median_s": 2.0}, "compute": {"median_s": 1.5}}}
J
"$src/tools/bench" --table "$t" >"$dir/table" 2>&1 || fail "--table: exit $?: $(cat "$dir/table")"
"$python" - "$dir/table" "$numpy_rate" <<'PY' || fail "the table: $(cat "$dir/table")"
import sys
table, numpy_rate = open(sys.argv[1]).read(), float(sys.argv[2])
want = [
    "gemm openblas n=4096, 2 ranks", "40.0 GFLOP/s compute",
    "0.990x bare cblas_dgemm (goal >= 0.97)",
    "pi cpu, 1 rank x 1 thread", "2e+08 samples/s",
    "pi cpu, 2 ranks x 1 thread", "3.8e+08 samples/s", "1.90x one rank (goal >= 1.8)",
    "pi cpu, 1 rank x 2 threads", "4e+08 samples/s",
    f"{4.0e8 / numpy_rate:.1f}x numpy on one core; 1 core {2.0e8 / numpy_rate:.1f}x",
    "gemm cublas fp64 n=32768, 1 GPU, overlap", "4.000 s end to end", "compute 3.000 s; 90% of transfers hidden",
    "gemm cublas fp64 n=32768, 2 GPU, overlap", "2.000 s end to end",
    "2.00x one GPU end to end (goal: shared overlap >= 1.95), compute 2.00x",
]
missing = [w for w in want if w not in table]
assert not missing, missing
assert table.count("\n  ") == 6, table   # one line per record (the 2-rank π beside the 1-rank one)
PY
# The same records as a section of docs/benchmarks.md (--markdown), with the defaults' rows: per
# figure its command (tools/bench's own, from commands.tsv, else the record's command line without
# its --json path) and date; the machine and commit from the records.
m="$dir/markdown"
mkdir "$m"
cat >"$m/defaults-gpu-np2.json" <<'J'
{"config": {"n": 32768}, "phases": {"end_to_end": {"median_s": 0.7}}, "started_at": "2026-11-28T04:00:00Z",
 "choice": {"taken": "row1d 2x1 shared transport nccl overlap"}, "cpu_model": "Test CPU",
 "versions": {"git": "abc123def456", "nccl": "2.28.3", "cuda": {"runtime": "13.0"}, "mpi_library": "Open MPI v4.1.6, x",
              "openblas": {"config": "OpenBLAS 0.3.26 X"}, "compiler": "GNU-13.3.0"},
 "gpus": {"count": 2, "models": ["NVIDIA H200"]},
 "wall": {"parts": [{"part": "setup", "s": 2.0}, {"part": "timed", "s": 4.0}, {"part": "peers", "s": 3.0},
                    {"part": "start", "s": 1.0}]},
 "command_line": ["build/scalebench", "gemm", "--backend", "cublas", "--json", "/x/defaults-gpu-np2.json"]}
J
cat >"$m/pinned-gpu-np2.json" <<'J'
{"config": {"n": 32768}, "phases": {"end_to_end": {"median_s": 0.5}}, "started_at": "2026-11-28T04:01:00Z"}
J
printf 'pinned-gpu-np2\tmpirun -np 2 scalebench gemm --pinned\n' >"$m/commands.tsv"
for s in 16 32; do
  cat >"$m/defaults-summa-np$s.json" <<J
{"config": {"n": 8192}, "phases": {"broadcast": {"median_s": 1.0}, "compute": {"median_s": 2.0}},
 "started_at": "2026-11-27T10:00:00Z", "choice": {"taken": "summa2d 4x4 replicated lookahead 0"}}
J
  cat >"$m/lookahead0-summa-np$s.json" <<J
{"config": {"n": 8192}, "phases": {"broadcast": {"median_s": 1.0}, "compute": {"median_s": 1.0}},
 "started_at": "2026-11-27T10:05:00Z"}
J
done
"$src/tools/bench" --markdown "$m" >"$dir/md" 2>&1 || fail "--markdown: exit $?: $(cat "$dir/md")"
"$python" - "$dir/md" <<'PY' || fail "the markdown: $(cat "$dir/md")"
import sys
md = open(sys.argv[1]).read()
want = [
    "Machine: Test CPU; up to 2x NVIDIA H200, CUDA 13.0, NCCL 2.28.3; Open MPI v4.1.6; 0.3.26; GNU-13.3.0. "
    "Commit: abc123def456.",
    "| figure | measured | against the peer / goal | command | date |",
    "| gemm cublas fp64 n=32768, 2 GPU, no schedule option | 0.700 s end to end | 1.400x the pinned "
    "shared/nccl/overlap run (0.500 s; goal <= 1.05); took row1d 2x1 shared transport nccl overlap; wall 10.0 s "
    "to the record, 7.0 s without the peer = 1.75x the timed repeats (4.00 s; goal <= 2), set-up 2.00 s | "
    "`scalebench gemm --backend cublas; mpirun -np 2 scalebench gemm --pinned` | 2026-11-28 |",
    "| gemm summa2d n=8192, 16 ranks x 1 thread, no lookahead given | 3.000 s broadcast + compute | 1.500x "
    "--lookahead 0 (2.000 s; goal <= 1); took summa2d 4x4 replicated lookahead 0 |",
    "32 ranks x 1 thread",
]
missing = [w for w in want if w not in md]
assert not missing, missing
assert md.count("\n| ") == 5, md   # header, rule and three figures
PY
# Summa2D against the PDGEMM of the same run (tools/bench summa): the one interval against the tuned
# variant, against its own compute, the shipped variant and end to end.
cat >"$m/summa-pdgemm-np16.json" <<'J'
{"config": {"n": 8192, "grid": [4, 4], "panel_width": 512}, "phases": {"compute": {"median_s": 2.0}},
 "distribution": {"panel_schedule": {"lookahead": 0}}, "started_at": "2026-11-29T01:00:00Z",
 "peers": {"scalapack": {"run_pre_distributed_s": 3.0, "variants": {
   "tuned": {"k_step": 512, "pre_distributed": {"median_s": 2.5}, "ratio_run_vs_peer": 1.2, "ratio_end_to_end_run_vs_peer": 0.6},
   "shipped": {"k_step": 32, "pre_distributed": {"median_s": 4.0}}}}}}
J
"$src/tools/bench" --markdown "$m" >"$dir/md" 2>&1 || fail "--markdown with summa: exit $?: $(cat "$dir/md")"
grep -qF "| gemm summa2d n=8192, 16 ranks x 1 thread (4x4, panel 512, lookahead 0), broadcast + compute as one interval | 3.000 s (compute 2.000 s) | 1.200x the tuned PDGEMM (k-step 512: 2.500 s; goal <= 0.9), 1.50x its own compute (goal <= 1.15); shipped PDGEMM (k-step 32) 4.000 s; end to end from rank 0 0.600x the tuned PDGEMM with its redistribution |" "$dir/md" ||
  fail "the summa row: $(cat "$dir/md")"

# --publish: the table into a copy of the docs. A new machine's section goes first under "Current
# figures"; published again, it is replaced in place and the old one is first in the history under
# the day; hand-written sections and the rest of both files are left as they were.
d="$dir/docs"
mkdir "$d"
printf '# Benchmarks\n\nintro\n\n## Current figures\n\n### Hand-written\n\nkept as is\n\n## What the figures mean\n\nmeaning\n' >"$d/benchmarks.md"
printf '# Benchmarks: history\n\nintro\n\n## 2026-01-01\n\n### old entry\n\nold\n' >"$d/benchmarks-history.md"
cp "$d/benchmarks-history.md" "$dir/history.before"
"$src/tools/bench" --publish "$m" "Test box, 16 cores" "$d" >"$dir/out" 2>&1 || fail "--publish: exit $?: $(cat "$dir/out")"
cmp -s "$d/benchmarks-history.md" "$dir/history.before" || fail "a new section changed the history"
"$python" - "$d/benchmarks.md" "$(date -u +%F)" <<'PY' || fail "after the first --publish: $(cat "$d/benchmarks.md")"
import sys
doc, day = open(sys.argv[1]).read(), sys.argv[2]
begin = "<!-- tools/bench --publish: Test box, 16 cores (generated: re-run tools/bench --publish, do not edit) -->"
assert doc.index("## Current figures") < doc.index(begin) < doc.index("### Hand-written"), doc
assert f"### Test box, 16 cores, {day} (`tools/bench`, records `markdown`)" in doc, doc
assert "| gemm summa2d n=8192, 16 ranks" in doc and "<!-- tools/bench --publish end: Test box, 16 cores -->" in doc, doc
assert doc.endswith("### Hand-written\n\nkept as is\n\n## What the figures mean\n\nmeaning\n"), doc
PY
cp "$d/benchmarks.md" "$dir/first"
cp -r "$m" "$dir/later"
rm "$dir/later/summa-pdgemm-np16.json"
"$src/tools/bench" --publish "$dir/later" "Test box, 16 cores" "$d" >"$dir/out" 2>&1 || fail "--publish again: exit $?: $(cat "$dir/out")"
"$python" - "$d/benchmarks.md" "$d/benchmarks-history.md" "$(date -u +%F)" <<'PY' || fail "after the second --publish: $(cat "$d/benchmarks.md" "$d/benchmarks-history.md")"
import sys
doc, hist, day = open(sys.argv[1]).read(), open(sys.argv[2]).read(), sys.argv[3]
assert doc.count("<!-- tools/bench --publish: Test box") == 1 and "(4x4, panel 512" not in doc, doc
assert "### Hand-written\n\nkept as is" in doc, doc
entry = f"## {day}\n\n### Test box, 16 cores: superseded on {day} by records `later` (tools/bench --publish)\n\n"
assert hist.index("intro") < hist.index(entry) < hist.index("## 2026-01-01\n\n### old entry"), hist
assert "(4x4, panel 512" in hist and "<!--" not in hist, hist
PY
# The same records published again: the section is replaced, the history is left as it was.
cp "$d/benchmarks-history.md" "$dir/history.before"
"$src/tools/bench" --publish "$dir/later" "Test box, 16 cores" "$d" >"$dir/out" 2>&1 || fail "--publish the same: exit $?: $(cat "$dir/out")"
grep -q "the same records again" "$dir/out" && cmp -s "$d/benchmarks-history.md" "$dir/history.before" ||
  fail "the same records published again changed the history: $(cat "$dir/out")"
[ "$(grep -c '<!-- tools/bench --publish: Test box' "$d/benchmarks.md")" = 1 ] || fail "the section is not once"
# Refusals leave both files as they were: a name that would break the markers (2), a document
# without the heading to publish under (3), a folder of records that makes no table (3).
cp "$d/benchmarks.md" "$dir/doc.before"
cp "$d/benchmarks-history.md" "$dir/history.before"
for bad in "two-->x" ""; do
  code=0
  "$src/tools/bench" --publish "$m" "$bad" "$d" >"$dir/out" 2>&1 || code=$?
  [ "$code" = 2 ] && [ "$(wc -l <"$dir/out")" = 1 ] || fail "--publish name '$bad': exit $code: $(cat "$dir/out")"
done
mkdir "$dir/empty"
code=0
"$src/tools/bench" --publish "$dir/empty" "Test box, 16 cores" "$d" >"$dir/out" 2>&1 || code=$?
[ "$code" = 3 ] && grep -q "no table of figures" "$dir/out" || fail "--publish of no records: exit $code: $(cat "$dir/out")"
cmp -s "$d/benchmarks.md" "$dir/doc.before" && cmp -s "$d/benchmarks-history.md" "$dir/history.before" ||
  fail "a refused --publish changed the docs"
printf '# Benchmarks\n\nno heading\n' >"$d/benchmarks.md"
code=0
"$src/tools/bench" --publish "$m" "Other box" "$d" >"$dir/out" 2>&1 || code=$?
[ "$code" = 3 ] && grep -q "no '## Current figures' heading" "$dir/out" || fail "--publish without the heading: exit $code: $(cat "$dir/out")"
[ "$(cat "$d/benchmarks.md")" = "$(printf '# Benchmarks\n\nno heading')" ] || fail "the refused document changed"
[ -z "$(find "$d" -name '*.publish-*')" ] || fail "a temporary file was left: $(ls "$d")"
# A record without a figure the table reads, and one that is not JSON: one line each, exit 3.
echo '{"rates": {}}' >"$t/pi-cpu-2ranks.json"
code=0
"$src/tools/bench" --table "$t" >"$dir/out" 2>&1 || code=$?
[ "$code" = 3 ] && grep -q "^tools/bench: no summary of $t: a record lacks a figure" "$dir/out" ||
  fail "a missing figure: exit $code: $(cat "$dir/out")"
printf '{"rates": ' >"$t/pi-cpu-2ranks.json"
code=0
"$src/tools/bench" --table "$t" >"$dir/out" 2>&1 || code=$?
[ "$code" = 3 ] && [ "$(grep -c "^tools/bench: no summary of $t: " "$dir/out")" = 1 ] ||
  fail "a cut record: exit $code: $(cat "$dir/out")"
code=0
"$src/tools/bench" --table "$dir/nothing" >"$dir/out" 2>&1 || code=$?
[ "$code" = 2 ] || fail "--table of no folder: exit $code"
echo "ok"
