#!/usr/bin/env bash
# tools/record-shape: its fixed set of runs made twice with this build (no profile: `auto` by its
# rules) gives records the same apart from what was measured (exit 0); a record changed in a key
# or a value is named (exit 1), a measured figure is not; a run that exits otherwise than
# expected is named with its log (exit 1); bad input is one line and exit 2, and `run` refuses a
# folder that is not empty before running anything.
set -euo pipefail
src="${SCALEBENCH_SOURCE_DIR:?}"
bin="${SCALEBENCH_BINARY:?}"
dir=$(mktemp -d "${SCALEBENCH_TEST_TMPDIR:-/tmp}/record-shape.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
tool="$src/tools/record-shape"
export XDG_CACHE_HOME="$dir/cache"  # no calibrated profile: the same choices every time
unset SCALEBENCH_PROFILE

"$tool" run --binary "$bin" "$dir/a" >"$dir/a.out" 2>&1 || fail "run a: exit $?: $(cat "$dir/a.out")"
grep -q "^gemm_inject: ran (exit 4)$" "$dir/a.out" || fail "the injected error's exit: $(cat "$dir/a.out")"
"$tool" run --binary "$bin" "$dir/b" >/dev/null 2>&1 || fail "run b: exit $?"
"$tool" compare "$dir/a" "$dir/b" >"$dir/same.out" || fail "the two runs differ: $(cat "$dir/same.out")"
grep -q "^11 of 11 records the same$" "$dir/same.out" || fail "$(cat "$dir/same.out")"

# A changed value and a new key are named; a measured figure is not.
python3 - "$dir/b/gemm1.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["config"]["n"] = 257
r["extra_key"] = 1
r["phases"]["compute"]["median_s"] *= 3
json.dump(r, open(sys.argv[1], "w"))
PY
code=0
"$tool" compare "$dir/a" "$dir/b" >"$dir/differ.out" || code=$?
[ "$code" = 1 ] || fail "changed records: exit $code: $(cat "$dir/differ.out")"
grep -q "^gemm1.json: 2 differences$" "$dir/differ.out" || fail "$(cat "$dir/differ.out")"
grep -q "^    .config.n: 256 -> 257$" "$dir/differ.out" || fail "$(cat "$dir/differ.out")"
grep -q "^    .extra_key: added$" "$dir/differ.out" || fail "$(cat "$dir/differ.out")"

# A run that exits otherwise than expected: a launcher that always fails.
printf '#!/bin/sh\nexit 3\n' >"$dir/fake-mpirun" && chmod +x "$dir/fake-mpirun"
code=0
SCALEBENCH_MPIEXEC="$dir/fake-mpirun" "$tool" run --binary "$bin" "$dir/c" >"$dir/c.out" 2>&1 || code=$?
[ "$code" = 1 ] || fail "failing runs: exit $code: $(cat "$dir/c.out")"
grep -q "^gemm1: exit 3, expected exit 0 (see $dir/c/gemm1.log)$" "$dir/c.out" || fail "$(cat "$dir/c.out")"

# Bad input: one line, exit 2, nothing run.
mkdir "$dir/empty"
bad() {  # bad PATTERN ARGS...
  local pattern="$1" out code=0
  shift
  out=$("$tool" "$@" 2>&1) || code=$?
  [ "$code" = 2 ] || fail "$*: exit $code, not 2: $out"
  [ "$(wc -l <<<"$out")" = 1 ] || fail "$*: more than one line: $out"
  grep -q -- "$pattern" <<<"$out" || fail "$*: said '$out', not '$pattern'"
}
bad "must be a new or empty folder" run --binary "$bin" "$dir/a"
bad "is not an executable file" run --binary "$dir/none" "$dir/d"
bad "is not a number" run --timeout soon "$dir/d"
bad "does not exist" compare "$dir/a" "$dir/nowhere"
bad "holds no record" compare "$dir/a" "$dir/empty"
bad "unknown mode" again
echo "{" >"$dir/empty/gemm1.json"
bad "different records" compare "$dir/a" "$dir/empty"
[ ! -e "$dir/d" ] || fail "a refused run made its folder"
echo "tools/record-shape: two runs of the fixed set the same; changes named; failing runs named; bad input refused"
