# shellcheck shell=bash
# Shared by the cluster tests (sourced): a test cluster for the test's lifetime, stopped and its
# folders removed on any exit; fail/check helpers.
#   cluster_up [start options]   -> $work (the test's folder), $cluster (the state folder);
#                                   the cluster's env sourced; exits 77 with start's reason
src="${SCALEBENCH_SOURCE_DIR:?}"
# shellcheck disable=SC2034 # used by the tests that source this
bin="${SCALEBENCH_BINARY:?}"
# shellcheck disable=SC2034
mpiexec="${SCALEBENCH_MPIEXEC:-mpirun}"
work=$(mktemp -d /tmp/scalebench-cluster-test.XXXXXX)
cluster="$work/cluster"
cluster_down() {
  "$src/tests/cluster/stop" "$cluster" || echo "FAIL: tests/cluster/stop did not clean up"
  rm -rf "$work"
}
trap cluster_down EXIT
cluster_up() {
  local out rc=0
  out=$("$src/tests/cluster/start" --state "$cluster" "$@" 2>&1) || rc=$?
  if [ "$rc" = 77 ]; then echo "$out"; exit 77; fi
  [ "$rc" = 0 ] || { echo "$out"; echo "FAIL: tests/cluster/start failed (exit $rc)"; exit 1; }
  # shellcheck disable=SC1091
  . "$cluster/env"
  export PATH="$PATH:/usr/sbin"
}
fail() { echo "FAIL: $*"; exit 1; }
# start_refused CODE PATTERN START-ARGS...: tests/cluster/start refuses them before making anything:
# exit CODE, its output matching PATTERN, one line (exit 2), no state folder.
start_refused() {
  local want="$1" pattern="$2" code=0 out
  shift 2
  out=$("$src/tests/cluster/start" --state "$work/refused" "$@" 2>&1) || code=$?
  [ "$code" = "$want" ] || fail "start $*: exit $code, not $want: $out"
  grep -q -- "$pattern" <<<"$out" || fail "start $*: said '$out', not '$pattern'"
  [ "$want" = 77 ] || [ "$(wc -l <<<"$out")" = 1 ] || fail "start $*: more than one line: $out"
  [ ! -e "$work/refused" ] || fail "start $* made $work/refused"
}
# check PYTHON-CODE ARGS...: a Python assertion over files.
check() { python3 -c "$1" "${@:2}" || fail "check failed: $1"; }
# The pids of the processes named $2 inside host $1 of the cluster.
host_pids() {
  local ns
  ns=$(cluster_host "$cluster" "$1" | awk '{ print $4 }')
  for p in $(cluster_pids_inside "$cluster"); do
    [ "$(cluster_ns_of "$p")" = "$ns" ] && [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$2" ] && echo "$p"
  done
  return 0
}
# wait_for_rank_on HOST JOB: waits up to 30 s for a scalebench on HOST while the job (a pid)
# runs; fails (status 1) when the job ends first or none started.
wait_for_rank_on() {
  for _ in $(seq 1 300); do
    [ -n "$(host_pids "$1" scalebench)" ] && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
# stop_job PID: ends a background job that is still running: SIGTERM, up to 5 s, then SIGKILL.
stop_job() {
  kill -0 "$1" 2>/dev/null || return 0
  kill -TERM "$1" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null || true
}
# Seconds (one decimal) since the time $1 (date +%s.%N).
seconds_since() { python3 -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$1"; }
# The pids of this cluster's rsh agents (and their watchers) still running.
agent_pids() { pgrep -f -- "/tests/cluster/rsh $cluster " || true; }
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$src/tests/cluster/lib.sh"
