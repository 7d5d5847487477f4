#!/usr/bin/env bash
# tests/cluster/start --cores-per-host C: host i owns CPUs (i-1)*C .. i*C-1 of those this process
# may use. Every entry into a host (the rsh agent, cluster_enter, the ranks mpirun starts there
# unbound) runs with that host's CPUs as its affinity; STATE/cpus records them; --slots defaults to
# C. Refused with one line and exit 2: more CPUs than there are, a bad count. Without the option
# every host sees every CPU. Needs 2 CPUs (skipped, saying why, otherwise).
set -euo pipefail
. "${SCALEBENCH_SOURCE_DIR:?}/tests/cluster/testing.sh"
mapfile -t mine < <(cluster_allowed_cpus)
[ ${#mine[@]} -ge 2 ] || { echo "tests/cluster/test_cores_per_host.sh: Skipped"; echo "needs 2 CPUs; this process may use ${#mine[@]}"; exit 77; }
start_refused 2 "needs $((2 * (${#mine[@]} + 1))) CPUs; this process may use ${#mine[@]}" --hosts 2 --cores-per-host $((${#mine[@]} + 1))
start_refused 2 "must be a positive integer" --hosts 2 --cores-per-host 0
start_refused 2 "must be a positive integer" --hosts 2 --cores-per-host x

cluster_up --hosts 2 --cores-per-host 1
printf 'node1 %s\nnode2 %s\n' "${mine[0]}" "${mine[1]}" | cmp -s - "$cluster/cpus" || fail "cpus: $(cat "$cluster/cpus")"
grep -qx "10.77.[0-9]*.1 slots=1" "$cluster/hostfile" || fail "--slots is not C: $(cat "$cluster/hostfile")"
# shellcheck disable=SC2016 # expanded on the host
show='echo "$(hostname) $(awk "/^Cpus_allowed_list:/ { print \$2 }" /proc/self/status)"'
[ "$("$cluster/rsh" node1 "$show")" = "node1 ${mine[0]}" ] || fail "rsh node1: $("$cluster/rsh" node1 "$show")"
[ "$(cluster_enter "$cluster" node2 sh -c "$show")" = "node2 ${mine[1]}" ] ||
  fail "cluster_enter node2: $(cluster_enter "$cluster" node2 sh -c "$show")"
# Ranks that mpirun leaves unbound keep their host's CPUs.
out=$(timeout 60 "$mpiexec" --hostfile "$cluster/hostfile" -np 2 --map-by ppr:1:node --bind-to none sh -c "$show") ||
  fail "mpirun: $out"
[ "$(sort <<<"$out")" = "$(printf 'node1 %s\nnode2 %s' "${mine[0]}" "${mine[1]}")" ] || fail "ranks ran on: $out"
"$src/tests/cluster/stop" "$cluster" || fail "stop"

# Without the option: no cpus record, every CPU on every host.
cluster_up --hosts 1
[ ! -e "$cluster/cpus" ] || fail "a cpus record without --cores-per-host"
all=$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)
[ "$("$cluster/rsh" node1 "$show")" = "node1 $all" ] || fail "rsh without --cores-per-host: $("$cluster/rsh" node1 "$show")"
echo "cluster --cores-per-host: each host runs on its own CPUs through rsh, cluster_enter and mpirun's unbound ranks; refusals before anything is made"
