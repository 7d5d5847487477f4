#!/usr/bin/env bash
# tools/run builds only what the main job needs, the scalebench binary and not the test programs;
# tools/check builds the rest. Cheap: the two scripts run on a fresh build folder (CPU-only, Ninja,
# whose `-t commands` lists every command a build of the given targets runs; Make's dry run stops at
# the first library not yet built), each build they ask for answered with that list: what tools/run
# would link holds scalebench and no test_ program, what tools/check would link holds the test
# programs. The contrast tools/run then starts is a stand-in that says what it was given.
#   test_tools_build_plan.sh SOURCE_DIR SCRATCH_DIR
set -euo pipefail
src="$1"
scratch="$2"
fail() { echo "FAIL: $*" >&2; exit 1; }
if ! command -v ninja >/dev/null 2>&1; then
  echo "skipped: ninja is not installed (tools/setup installs ninja-build)"
  exit 77
fi
rm -rf "$scratch"
mkdir -p "$scratch/bin" "$scratch/build"
real_cmake="$(command -v cmake)"
log="$scratch/cmake-calls.log"
# cmake as the scripts call it, each call logged; a build lists its commands instead.
cat >"$scratch/bin/cmake" <<EOF
#!/usr/bin/env bash
printf '%s\n' "\$*" >>"$log"
if [ "\$1" = --build ]; then exec "$real_cmake" "\$@" -- -t commands; fi
exec "$real_cmake" "\$@"
EOF
chmod +x "$scratch/bin/cmake"
printf '#!/bin/sh\necho "stand-in scalebench $*"\n' >"$scratch/build/scalebench"
chmod +x "$scratch/build/scalebench"
export PATH="$scratch/bin:$PATH" SCALEBENCH_NO_INSTALL=1 SCALEBENCH_BUILD_DIR="$scratch/build" SCALEBENCH_JOBS=1
export SCALEBENCH_CMAKE_ARGS="-G Ninja -DSCALEBENCH_CUDA=OFF"
# The executables a list of commands links (an -o that is no object file), by name.
planned() { grep -Eo ' -o [^ ]+' "$1" | grep -v '\.o$' | sed -E 's#^ -o (.*/)?##' | sort -u; }

run_out="$scratch/run.out"
"$src/tools/run" --modes single-core >"$run_out" 2>&1 || { cat "$run_out"; fail "tools/run failed"; }
builds=$(grep -c -- '^--build' "$log" || true)
[ "$builds" = 1 ] || fail "tools/run asked for $builds builds: $(cat "$log")"
grep -q -- '^--build .* --target scalebench$' "$log" || fail "tools/run's build is not the scalebench target: $(cat "$log")"
run_plan=$(planned "$run_out")
echo "tools/run would link: $(echo $run_plan)"
echo "$run_plan" | grep -qx scalebench || fail "tools/run's plan does not link scalebench"
if echo "$run_plan" | grep -q '^test_'; then fail "tools/run's plan links test programs: $(echo $run_plan)"; fi
grep -q '^stand-in scalebench contrast --modes single-core$' "$run_out" || fail "the contrast was not started: $(tail -5 "$run_out")"

# tools/check after it: everything (its ctest selects no test here: nothing was built).
: >"$log"
check_out="$scratch/check.out"
SCALEBENCH_CHECK_LINT=0 SCALEBENCH_CHECK_SANITIZE=0 "$src/tools/check" -R '^no test has this name$' >"$check_out" 2>&1 ||
  { cat "$check_out"; fail "tools/check failed"; }
grep -q -- '^--build [^ ]* -j 1$' "$log" || fail "tools/check's build is not the whole build: $(cat "$log")"
check_plan=$(planned "$check_out")
echo "$check_plan" | grep -q '^test_' || fail "tools/check's plan links no test program: $(echo $check_plan)"
echo "tools/check would link $(echo "$check_plan" | grep -c '^test_') test programs besides"
