#!/usr/bin/env bash
# tests/cluster/start --iproute DIR: ip and tc taken from a folder (as on a machine without the
# iproute2 package, where Debian's is unpacked into a folder with its libraries): start shapes the
# links and stop deletes them with the folder's programs, commands through the cluster see them,
# and a folder without them is one line and exit 2 before anything is made.
set -euo pipefail
. "${SCALEBENCH_SOURCE_DIR:?}/tests/cluster/testing.sh"
# The folder: ip and tc that log each call and run this machine's own.
tools="$work/iproute/usr/sbin"
mkdir -p "$tools" "$work/iproute/usr/lib/x86_64-linux-gnu"
for t in ip tc; do
  real=$(PATH="$PATH:/usr/sbin:/sbin" command -v "$t") || { echo "no $t on this machine to stand behind the folder's"; exit 77; }
  printf '#!/bin/sh\necho "%s $*" >>%q\nexec %q "$@"\n' "$t" "$work/calls" "$real" >"$tools/$t"
  chmod 755 "$tools/$t"
done
# A library folder is put on LD_LIBRARY_PATH for them (empty here: the programs need none).
touch "$work/iproute/usr/lib/x86_64-linux-gnu/libstand-in.so.1"

# Refused before anything is made: no folder, a folder without the programs.
for bad in "$work/nothing" "$work"; do
  code=0
  out=$("$src/tests/cluster/start" --hosts 1 --iproute "$bad" --state "$work/refused" 2>&1) || code=$?
  [ "$code" = 2 ] || fail "--iproute $bad: exit $code: $out"
  [ "$(wc -l <<<"$out")" = 1 ] && grep -q "^tests/cluster: --iproute $bad: " <<<"$out" || fail "--iproute $bad said: $out"
  [ ! -e "$work/refused" ] || fail "--iproute $bad made $work/refused"
done

cluster_up --hosts 2 --rate 1gbit --iproute "$work/iproute"
grep -q "^ip link add name sbc" "$work/calls" || fail "start made the bridge with another ip: $(cat "$work/calls")"
grep -q "^tc qdisc add dev" "$work/calls" || fail "start shaped the links with another tc: $(cat "$work/calls")"
[ "$(cat "$cluster/iproute")" = "$work/iproute" ] || fail "the state does not name the folder"
grep -q "^export SCALEBENCH_IPROUTE_DIR=$work/iproute$" "$cluster/env" || fail "env: $(cat "$cluster/env")"
# A command through the cluster takes the folder's ip, and the library folder is on its path.
: >"$work/calls"
"$cluster/rsh" node1 ip -4 route >/dev/null || fail "ip through rsh"
grep -q "^ip -4 route" "$work/calls" || fail "rsh ran another ip: $(cat "$work/calls")"
"$cluster/rsh" node1 'echo "$LD_LIBRARY_PATH"' | grep -q "$work/iproute/usr/lib/x86_64-linux-gnu" ||
  fail "the folder's libraries are not on LD_LIBRARY_PATH inside the cluster"
"$cluster/rsh" node1 tc qdisc show dev eth0 | grep -qi "rate 1Gbit" || fail "node1's link is not shaped"
# stop deletes the links with the folder's ip, and leaves none.
links=$(grep '^link' "$cluster/created" | awk '{ print $2 }')
: >"$work/calls"
"$src/tests/cluster/stop" "$cluster" || fail "stop"
grep -q "^ip link del" "$work/calls" || fail "stop deleted the links with another ip: $(cat "$work/calls")"
for l in $links; do ! ip link show "$l" >/dev/null 2>&1 || fail "link $l left behind"; done
echo "ok"
