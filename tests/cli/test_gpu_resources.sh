#!/usr/bin/env bash
# The GPU tests' resource allocation without a GPU: tools/gpu-resources writes CTest's resource
# spec from a stand-in nvidia-smi (four GPUs, a subset named by CUDA_VISIBLE_DEVICES, none, one
# that fails, one that answers nonsense), and under a real ctest with that spec,
# tests/support/visible-gpus gives each test of a small project exactly the GPUs CTest allocated
# it, no GPU to two tests at once; a test needing more GPUs than there are is not run.
set -euo pipefail
src="${SCALEBENCH_SOURCE_DIR:?}"
tool="$src/tools/gpu-resources"
dir=$(mktemp -d "${SCALEBENCH_TEST_TMPDIR:-/tmp}/gpu-resources.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
mkdir "$dir/bin" "$dir/none"
# The stand-in answers as `nvidia-smi --query-gpu=index,uuid --format=csv,noheader` does; FAKE_SMI
# picks another answer.
cat >"$dir/bin/nvidia-smi" <<'SH'
#!/bin/sh
case "${FAKE_SMI:-four}" in
  four) printf '0, GPU-0a1b\n1, GPU-1c2d\n2, GPU-2e3f\n3, GPU-3a4b\n' ;;
  nodev) echo "No devices were found"; exit 6 ;;
  junk) echo "Failed to initialize NVML: Driver/library version mismatch" ;;
esac
SH
chmod +x "$dir/bin/nvidia-smi"
ids() {  # ids <env...>: the GPU ids of the spec tools/gpu-resources writes under that environment
  env PATH="$dir/bin:/usr/bin:/bin" "$@" "$tool" 2>"$dir/err" | python3 -c '
import json, sys
s = json.load(sys.stdin)
assert s["version"] == {"major": 1, "minor": 0}, s
assert all(g["slots"] == 1 for g in s["local"][0]["gpus"]), s
print(",".join(g["id"] for g in s["local"][0]["gpus"]))'
}
[ "$(ids env -u CUDA_VISIBLE_DEVICES)" = "0,1,2,3" ] || fail "four GPUs: $(ids env -u CUDA_VISIBLE_DEVICES)"
grep -qx "tools/gpu-resources: 4 GPU(s) (nvidia-smi)" "$dir/err" || fail "count line: $(cat "$dir/err")"
[ "$(ids CUDA_VISIBLE_DEVICES=3,GPU-1c)" = "1,3" ] || fail "CUDA_VISIBLE_DEVICES=3,GPU-1c: $(ids CUDA_VISIBLE_DEVICES=3,GPU-1c)"
[ "$(ids CUDA_VISIBLE_DEVICES=)" = "" ] || fail "CUDA_VISIBLE_DEVICES empty: $(ids CUDA_VISIBLE_DEVICES=)"
[ "$(ids FAKE_SMI=nodev)" = "" ] || fail "no device: not an empty list"
grep -q "nvidia-smi found no GPU (exit 6: No devices were found)" "$dir/err" || fail "no device: $(cat "$dir/err")"
[ "$(env PATH="$dir/none:/usr/bin:/bin" "$tool" 2>&1 >/dev/null)" = "tools/gpu-resources: 0 GPU(s) (no nvidia-smi on PATH)" ] ||
  fail "without nvidia-smi"
code=0
env PATH="$dir/bin:/usr/bin:/bin" FAKE_SMI=junk "$tool" >/dev/null 2>"$dir/err" || code=$?
[ "$code" = 3 ] && grep -q "not 'index, GPU-uuid'" "$dir/err" || fail "nonsense: exit $code, $(cat "$dir/err")"
code=0
env PATH="$dir/bin:/usr/bin:/bin" CUDA_VISIBLE_DEVICES=7 "$tool" >/dev/null 2>"$dir/err" || code=$?
[ "$code" = 3 ] && grep -q "CUDA_VISIBLE_DEVICES names '7'" "$dir/err" || fail "GPU 7: exit $code, $(cat "$dir/err")"
code=0
"$tool" --out >/dev/null 2>&1 || code=$?
[ "$code" = 2 ] || fail "--out without a file: exit $code"
env PATH="$dir/bin:/usr/bin:/bin" "$tool" --out "$dir/spec.json" 2>/dev/null || fail "--out"

# Under ctest with that spec: six tests of 1 or 2 GPUs, -j 6, each recording what it saw while it
# held its GPUs; one test of 5 GPUs is not run.
mkdir "$dir/p"
cat >"$dir/p/held.sh" <<'SH'
#!/bin/sh
# held.sh NAME: what test NAME saw (its GPUs, their order) and when it held them.
echo "$CUDA_VISIBLE_DEVICES $CUDA_DEVICE_ORDER $(date +%s.%N)" >"$(dirname "$0")/$1.start"
sleep 0.3
date +%s.%N >"$(dirname "$0")/$1.end"
SH
chmod +x "$dir/p/held.sh"
cat >"$dir/p/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.16)
project(gpu_resources NONE)
enable_testing()
foreach(t 1 2 3 4 5 6)
  math(EXPR g "1 + (\${t} % 2)")
  add_test(NAME t\${t} COMMAND $src/tests/support/visible-gpus $dir/p/held.sh t\${t})
  set_tests_properties(t\${t} PROPERTIES RESOURCE_GROUPS "\${g},gpus:1")
endforeach()
add_test(NAME five COMMAND true)
set_tests_properties(five PROPERTIES RESOURCE_GROUPS "5,gpus:1")
CM
(cd "$dir/p" && cmake -S . -B b >/dev/null && cd b && ctest -j 6 --resource-spec-file "$dir/spec.json" >"$dir/ctest.log" 2>&1) || true
grep -q "t6 .*Passed" "$dir/ctest.log" || fail "ctest: $(cat "$dir/ctest.log")"
grep -q "five .*Not Run" "$dir/ctest.log" || fail "the 5-GPU test ran: $(cat "$dir/ctest.log")"
python3 - "$dir/p" <<'PY' || fail "allocation: $(cat "$dir"/p/t*.start)"
import sys
runs = []
for t in range(1, 7):
    gpus, order, start = open(f"{sys.argv[1]}/t{t}.start").read().split()
    end = float(open(f"{sys.argv[1]}/t{t}.end").read())
    ids = gpus.split(",")
    assert order == "PCI_BUS_ID", order
    assert len(ids) == 1 + t % 2 and len(set(ids)) == len(ids) and set(ids) <= {"0", "1", "2", "3"}, (t, ids)
    runs.append((float(start), end, set(ids)))
for i, a in enumerate(runs):
    for b in runs[i + 1:]:
        if a[0] < b[1] and b[0] < a[1]:
            assert not (a[2] & b[2]), ("one GPU held by two tests at once", a, b)
PY
echo "ok"
