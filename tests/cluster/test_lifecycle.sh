#!/usr/bin/env bash
# tests/cluster/start and stop: two clusters side by side on their own bridges and subnets, each
# host with its hostname, its address and no route but its subnet's (this machine's hostname
# untouched); stop leaves no process, interface or folder behind, is idempotent, and cleans up
# after a start killed half-way.
set -euo pipefail
. "${SCALEBENCH_SOURCE_DIR:?}/tests/cluster/testing.sh"
other="$work/other"
trap '"$src/tests/cluster/stop" "$other"; cluster_down' EXIT
me=$(hostname)
cluster_up --hosts 2 --rate 100gbit
out=$("$src/tests/cluster/start" --hosts 3 --state "$other" 2>&1) || fail "a second cluster did not start: $out"
for d in "$cluster" "$other"; do
  n=0
  while read -r name addr _ _; do
    n=$((n + 1))
    [ "$("$d/rsh" "$name" hostname)" = "$name" ] || fail "$name: wrong hostname"
    routes=$("$d/rsh" "$name" ip -4 route)
    { [ "$(wc -l <<<"$routes")" = 1 ] && grep -q "^${addr%.*}.0/24 dev eth0" <<<"$routes"; } ||
      fail "$name: routes other than its subnet: $routes"
    "$d/rsh" "$name" ip -4 -o addr | grep -q " $addr/24 " || fail "$name: not at $addr"
  done <"$d/hosts"
  [ "$n" = "$(wc -l <"$d/hostfile")" ] || fail "hostfile and hosts differ"
done
[ "$(hostname)" = "$me" ] || fail "this machine's hostname changed to $(hostname)"
subnet() { sed -n 's/.*subnet=\([^ ]*\).*/\1/p' "$1/links"; }
[ "$(subnet "$cluster")" != "$(subnet "$other")" ] || fail "two clusters share a subnet"
grep -q "rate=100gbit" "$cluster/links" || fail "--rate not applied"
"$cluster/rsh" node1 tc qdisc show dev eth0 | grep -qiE "rate 100Gbit" || fail "node1's link is not shaped to 100gbit"
# Across hosts (and nowhere else): node1 reaches node2 of its own cluster, not the other's.
a2=$(awk '$1 == "node2" { print $2 }' "$cluster/hosts")
o2=$(awk '$1 == "node2" { print $2 }' "$other/hosts")
connect() { "$cluster/rsh" node1 "bash -c 'exec 3<>/dev/tcp/$1/22'" 2>&1 || true; }
connect "$a2" | grep -q "refused" ||
  fail "node1 cannot reach node2 ($a2) on the bridge"
connect "$o2" | grep -q "unreachable" ||
  fail "node1 reaches the other cluster's node2 ($o2)"
# stop: everything gone, twice in a row.
links=$(grep '^link' "$other/created" | awk '{ print $2 }')
mkdir "$work/gone" && cp "$other/hosts" "$work/gone/"  # its namespaces, to look for after stop
[ -n "$(cluster_pids_inside "$work/gone")" ] || fail "no process found in the hosts' namespaces"
"$src/tests/cluster/stop" "$other" || fail "stop failed"
"$src/tests/cluster/stop" "$other" || fail "a second stop failed"
[ ! -e "$other" ] || fail "stop left $other"
for l in $links; do ! ip link show "$l" >/dev/null 2>&1 || fail "stop left interface $l"; done
[ -z "$(cluster_pids_inside "$work/gone")" ] || fail "stop left processes in the hosts' namespaces"
# A start killed half-way: stop removes what it had made.
"$src/tests/cluster/start" --hosts 3 --state "$other" >/dev/null 2>&1 &
starter=$!
for _ in $(seq 1 100); do [ "$( (cat "$other/created" 2>/dev/null || true) | wc -l)" -ge 3 ] && break; sleep 0.05; done
kill -KILL "$starter"
wait "$starter" 2>/dev/null || true
links=$(grep '^link' "$other/created" | awk '{ print $2 }')
[ -n "$links" ] || fail "the start was not killed half-way: $(cat "$other/created")"
"$src/tests/cluster/stop" "$other" || fail "stop after a killed start failed"
[ ! -e "$other" ] || fail "stop left $other after a killed start"
for l in $links; do ! ip link show "$l" >/dev/null 2>&1 || fail "stop left interface $l after a killed start"; done
! pgrep -f "scalebench-cluster:$other/" >/dev/null || fail "stop left a host holder after a killed start"
echo "cluster: two clusters side by side, isolated; stop cleans up, also after a killed start"
