#!/usr/bin/env bash
# gemm --distribution shared where Open MPI's shared-memory backing folder cannot hold the node's
# windows: a 64 MiB /dev/shm (a container's default) under 384 MiB of fp64 A, B and C; the folder
# (OMPI_MCA_osc_sm_backing_directory) missing, a regular file, read-only or full. Each run must end
# in bounded time (no hang, no SIGBUS), exit 0, run the replicated scheme with a warning naming the
# folder and its figures (table and record), and give the same C as a replicated run. A small run
# that fits, and a 1-rank run (no backing file at all), still use shared windows; a bad
# SCALEBENCH_NO_SHARED_WINDOWS is a usage error (exit 2) naming the variable. Where the replicated
# fallback itself does not fit the memory available, the memory check says so (exit 3).
#
# Runs inside a private mount namespace (unshare -m) with its own tmpfs on /dev/shm: skipped
# (exit 77, saying why) where namespaces or mounts are not permitted.
set -u

bin=${SCALEBENCH_BINARY:?SCALEBENCH_BINARY names the scalebench binary}
mpiexec=${SCALEBENCH_MPIEXEC:-mpirun}

if [ "${1:-}" != --inside ]; then
  if ! unshare -m --propagation private true 2>/dev/null; then
    echo "SKIP: unshare -m is not permitted here (needs root or CAP_SYS_ADMIN): no private /dev/shm to shrink"
    exit 77
  fi
  exec unshare -m --propagation private "$0" --inside
fi

if ! mount -t tmpfs -o size=64m tmpfs /dev/shm 2>/dev/null; then
  echo "SKIP: mounting a tmpfs on /dev/shm is not permitted in this mount namespace"
  exit 77
fi

work=$(mktemp -d)
cleanup() {
  umount /proc/meminfo "$work/ro" "$work/full" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# run NAME RANKS [mpirun options...] -- [gemm options...]: the exit code in $rc, output in $out,
# the record in $work/NAME.json. Bounded: a hang is a failure, not a stuck test.
run() {
  local name=$1 ranks=$2
  shift 2
  local mpi_opts=()
  while [ "$1" != -- ]; do
    mpi_opts+=("$1")
    shift
  done
  shift
  out=$(timeout -k 10 150 "$mpiexec" -np "$ranks" --oversubscribe "${mpi_opts[@]}" "$bin" gemm --reps 1 --warmup 0 \
    --no-peer --json "$work/$name.json" "$@" 2>&1)
  rc=$?
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then fail "$name: still running after 150 s (hang)"; fi
}

# field NAME EXPR: a Python expression over the record r.
field() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$work/$1.json"; }

# The same run with --distribution replicated: the C every fallback must give.
reference() {
  local name=$1
  shift
  run "$name" 2 -- --distribution replicated "$@"
  [ "$rc" = 0 ] || fail "$name: replicated reference exit $rc: $out"
}

# expect_fallback NAME WHAT REFERENCE [mpirun options...] -- [gemm options...]: the run fell back
# and its warning contains WHAT.
expect_fallback() {
  local name=$1 what=$2 ref=$3 before=$failures
  shift 3
  run "$name" 2 "$@" --distribution shared
  if [ "$rc" != 0 ]; then
    fail "$name: exit $rc, expected 0 with a fallback: $out"
    return
  fi
  case "$out" in
    *"warning: --distribution shared fell back to replicated"*"$what"*) ;;
    *) fail "$name: the table has no fallback warning naming '$what': $out" ;;
  esac
  [ "$(field "$name" "r['distribution']['scheme']")" = replicated ] || fail "$name: the record's scheme is not replicated"
  [ "$(field "$name" "r['distribution']['requested_scheme']")" = shared ] || fail "$name: requested_scheme is not shared"
  case "$(field "$name" "r['distribution'].get('warning', '')")" in
    *"$what"*) ;;
    *) fail "$name: the record's distribution.warning does not name '$what'" ;;
  esac
  [ "$(field "$name" "r['verification']['ok']")" = True ] || fail "$name: verification failed"
  [ "$(field "$name" "r['verification']['c_digest']")" = "$(field "$ref" "r['verification']['c_digest']")" ] ||
    fail "$name: C differs from the replicated run's"
  [ "$failures" != "$before" ] || echo "ok: $name fell back: $(field "$name" "r['distribution']['warning']")"
}

big=(--m 4096 --n 4096 --k 4096 --precision fp64)
small=(--n 256)

# 1. /dev/shm of 64 MiB, 3 x 128 MiB of windows: falls back, naming the folder, its free bytes
#    and the bytes needed.
reference big_replicated "${big[@]}"
expect_fallback big_shm "/dev/shm" big_replicated -- "${big[@]}"
case "$out" in
  *"/dev/shm"*"free, but the node's windows need"*"405848064 bytes"*) ;;
  *) fail "big_shm: the warning does not give the free bytes and the 405848064 bytes needed: $out" ;;
esac

# 2. The backing folder (OMPI_MCA_osc_sm_backing_directory) missing, a file, read-only, full.
reference small_replicated "${small[@]}"
expect_fallback missing_folder "$work/none (OMPI_MCA_osc_sm_backing_directory) on $(hostname): No such file or directory" small_replicated \
  -x "OMPI_MCA_osc_sm_backing_directory=$work/none" -- "${small[@]}"
touch "$work/file"
expect_fallback file_folder "$work/file (OMPI_MCA_osc_sm_backing_directory) on $(hostname) is not a folder" \
  small_replicated -x "OMPI_MCA_osc_sm_backing_directory=$work/file" -- "${small[@]}"
mkdir -p "$work/ro" "$work/full"
if mount -t tmpfs -o ro,size=4m tmpfs "$work/ro" 2>/dev/null; then
  expect_fallback readonly_folder "no file can be created in it" small_replicated \
    -x "OMPI_MCA_osc_sm_backing_directory=$work/ro" -- "${small[@]}"
else
  fail "could not mount a read-only tmpfs on $work/ro"
fi
if mount -t tmpfs -o size=16m tmpfs "$work/full" 2>/dev/null; then
  dd if=/dev/zero of="$work/full/filler" bs=1M count=64 2>/dev/null # stops at ENOSPC
  expect_fallback full_folder "$work/full" small_replicated \
    -x "OMPI_MCA_osc_sm_backing_directory=$work/full" -- "${small[@]}"
  case "$out" in *"has 0.0 MiB (0 bytes) free"*) ;; *) fail "full_folder: the warning does not say 0 bytes free" ;; esac
else
  fail "could not mount a tmpfs on $work/full"
fi

# 3. What fits still uses shared windows: a small run in the 64 MiB /dev/shm, and one rank (its
#    window is plain memory, no backing file) even with a missing folder.
run small_shared 2 -- --distribution shared "${small[@]}"
[ "$rc" = 0 ] || fail "small_shared: exit $rc: $out"
[ "$(field small_shared "r['distribution']['scheme']")" = shared ] || fail "small_shared: did not use shared windows: $out"
[ "$(field small_shared "r['verification']['c_digest']")" = "$(field small_replicated "r['verification']['c_digest']")" ] ||
  fail "small_shared: C differs from the replicated run's"
run one_rank 1 -x "OMPI_MCA_osc_sm_backing_directory=$work/none" -- --distribution shared "${small[@]}"
[ "$rc" = 0 ] || fail "one_rank: exit $rc: $out"
[ "$(field one_rank "r['distribution']['scheme']")" = shared ] || fail "one_rank: did not use shared windows: $out"

# 4. SCALEBENCH_NO_SHARED_WINDOWS: 1/yes/true/on fall back, 0/no/false/off/empty do not, anything
#    else is a usage error on every rank (one line naming the variable, exit 2).
for v in 1 yes TRUE on; do
  expect_fallback "env_$v" "SCALEBENCH_NO_SHARED_WINDOWS=$v is set" small_replicated \
    -x "SCALEBENCH_NO_SHARED_WINDOWS=$v" -- "${small[@]}"
done
for v in 0 no False off ""; do
  run "env_off_$v" 2 -x "SCALEBENCH_NO_SHARED_WINDOWS=$v" -- --distribution shared "${small[@]}"
  [ "$rc" = 0 ] || fail "SCALEBENCH_NO_SHARED_WINDOWS='$v': exit $rc: $out"
  [ "$(field "env_off_$v" "r['distribution']['scheme']")" = shared ] || fail "SCALEBENCH_NO_SHARED_WINDOWS='$v' did not use shared"
done
for v in maybe 2 " 1"; do
  run env_bad 2 -x "SCALEBENCH_NO_SHARED_WINDOWS=$v" -- --distribution shared "${small[@]}"
  [ "$rc" = 2 ] || fail "SCALEBENCH_NO_SHARED_WINDOWS='$v': exit $rc, expected 2: $out"
  [ "$(printf '%s\n' "$out" | grep -c "error: SCALEBENCH_NO_SHARED_WINDOWS='$v' (environment)")" = 1 ] ||
    fail "SCALEBENCH_NO_SHARED_WINDOWS='$v': not one error line naming the variable: $out"
  [ ! -e "$work/env_bad.json" ] || fail "SCALEBENCH_NO_SHARED_WINDOWS='$v': a record was written"
done

# 5. The fallback's own memory: with 500 MiB available (/proc/meminfo bound over in this
#    namespace), 384 MiB of shared windows fit but the replicated scheme's 640 MiB do not: where
#    the windows cannot be made the memory check counts the replicated scheme and ends with exit 3
#    naming the fallback; where they can (a 1 GiB /dev/shm), the shared run goes ahead.
printf 'MemTotal:       1048576 kB\nMemAvailable:    512000 kB\n' >"$work/meminfo"
if mount --bind "$work/meminfo" /proc/meminfo 2>/dev/null; then
  run memory_fallback 2 -- --distribution shared "${big[@]}"
  [ "$rc" = 3 ] || fail "memory_fallback: exit $rc, expected 3 (the replicated fallback does not fit): $out"
  [ "$(printf '%s\n' "$out" | grep -c "error: .* needs 0.62 GiB of host memory .*A_i + B + C_i.*--distribution shared falls back to replicated: .*/dev/shm.* but only 0.49 GiB is available")" = 1 ] ||
    fail "memory_fallback: not one error line with the replicated need and the fallback's reason: $out"
  umount /dev/shm
  mount -t tmpfs -o size=1g tmpfs /dev/shm
  run memory_shared 2 -- --distribution shared "${big[@]}"
  [ "$rc" = 0 ] || fail "memory_shared: exit $rc, expected 0 (384 MiB of windows fit 500 MiB): $out"
  [ "$(field memory_shared "r['distribution']['scheme']")" = shared ] || fail "memory_shared: did not use shared windows"
  umount /proc/meminfo
else
  fail "could not bind a file over /proc/meminfo in this mount namespace"
fi

# Nothing left in the backing folders: no probe file, no window file.
leftover=$(find /dev/shm "$work/full" -maxdepth 1 \( -name '.scalebench-probe*' -o -name 'osc_sm.*' \))
[ -z "$leftover" ] || fail "files left in the backing folders: $leftover"

if [ "$failures" != 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all shared-memory backing cases passed"
