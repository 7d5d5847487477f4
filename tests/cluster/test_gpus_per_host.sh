#!/usr/bin/env bash
# tests/cluster/start --gpus-per-host G without GPUs: a stand-in nvidia-smi listing 4 GPUs. Host i
# sees GPUs (i-1)*G .. i*G-1 through every entry (the rsh agent, cluster_enter, the ranks mpirun
# starts there, whatever CUDA_VISIBLE_DEVICES mpirun itself has), CUDA_VISIBLE_DEVICES's own
# entries are honoured where it is set, NCCL_HOSTID never reaches a host, STATE/gpus and STATE/env
# say what was set. Refused with one line and exit 2: more GPUs than there are, a bad count,
# --slurm; exit 77: nvidia-smi lists no GPU, CUDA_VISIBLE_DEVICES empty. Without the option
# nothing of it is there. Stop leaves nothing behind.
set -euo pipefail
. "${SCALEBENCH_SOURCE_DIR:?}/tests/cluster/testing.sh"
extra="$work/second"
trap '"$src/tests/cluster/stop" "$extra" || echo "FAIL: tests/cluster/stop did not clean up $extra"; cluster_down' EXIT
# The stand-in: 4 GPUs, or none where NO_GPU is set (nvidia-smi's line and exit status then).
mkdir -p "$work/bin"
cat >"$work/bin/nvidia-smi" <<'SMI'
#!/bin/sh
if [ -n "${NO_GPU:-}" ]; then echo "No devices were found"; exit 6; fi
case "$*" in *--query-gpu=index*) printf '0\n1\n2\n3\n' ;; *) echo "stand-in nvidia-smi: $*" >&2; exit 2 ;; esac
SMI
chmod 755 "$work/bin/nvidia-smi"
export PATH="$work/bin:$PATH"
unset CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER

# Refusals, before anything is made (testing.sh, start_refused).
start_refused 2 "needs 6 GPUs; nvidia-smi gives 4" --hosts 3 --gpus-per-host 2
CUDA_VISIBLE_DEVICES=1,2 start_refused 2 "needs 3 GPUs; CUDA_VISIBLE_DEVICES=1,2 gives 2" --hosts 3 --gpus-per-host 1
start_refused 2 "must be a positive integer" --hosts 2 --gpus-per-host 0
start_refused 2 "must be a positive integer" --hosts 2 --gpus-per-host x
start_refused 2 "does not go with --slurm" --hosts 2 --gpus-per-host 1 --slurm
NO_GPU=1 start_refused 77 "nvidia-smi lists no GPU: No devices were found" --hosts 2 --gpus-per-host 1
CUDA_VISIBLE_DEVICES='' start_refused 77 "no GPU here (CUDA_VISIBLE_DEVICES= lists none)" --hosts 2 --gpus-per-host 1
CUDA_VISIBLE_DEVICES=-1 start_refused 77 "no GPU here" --hosts 2 --gpus-per-host 1

# 2 hosts x 2 GPUs of 4; NCCL_HOSTID set here must not reach them.
export NCCL_HOSTID=same-for-all
cluster_up --hosts 2 --gpus-per-host 2
printf 'node1 0,1 PCI_BUS_ID\nnode2 2,3 PCI_BUS_ID\n' | cmp -s - "$cluster/gpus" || fail "gpus: $(cat "$cluster/gpus")"
[ -z "${NCCL_HOSTID+set}" ] || fail "sourcing env left NCCL_HOSTID set"
for v in "NCCL_NET=Socket" "NCCL_IB_DISABLE=1" "NCCL_MNNVL_ENABLE=0"; do
  grep -qx "export $v" "$cluster/env" || fail "env lacks $v: $(cat "$cluster/env")"
done
grep -qx "unset NCCL_HOSTID" "$cluster/env" || fail "env does not unset NCCL_HOSTID"
export NCCL_HOSTID=same-for-all CUDA_VISIBLE_DEVICES=3
# shellcheck disable=SC2016 # expanded on the host
show='echo "$(hostname) ${CUDA_VISIBLE_DEVICES-unset} ${CUDA_DEVICE_ORDER-unset} ${NCCL_HOSTID-unset}"'
[ "$("$cluster/rsh" node1 "$show")" = "node1 0,1 PCI_BUS_ID unset" ] || fail "rsh node1: $("$cluster/rsh" node1 "$show")"
[ "$(cluster_enter "$cluster" node2 sh -c "$show")" = "node2 2,3 PCI_BUS_ID unset" ] ||
  fail "cluster_enter node2: $(cluster_enter "$cluster" node2 sh -c "$show")"
# The ranks mpirun starts on each host (through the agent and orted), mpirun's own CUDA_VISIBLE_DEVICES aside.
out=$(timeout 60 "$mpiexec" --hostfile "$cluster/hostfile" -np 4 --map-by ppr:2:node --bind-to none sh -c "$show") ||
  fail "mpirun: $out"
[ "$(sort <<<"$out" | uniq -c | awk '{ $1 = $1; print }')" = "$(printf '2 node1 0,1 PCI_BUS_ID unset\n2 node2 2,3 PCI_BUS_ID unset')" ] ||
  fail "ranks saw: $out"
unset CUDA_VISIBLE_DEVICES

# CUDA_VISIBLE_DEVICES's entries honoured (UUIDs too), and a CUDA_DEVICE_ORDER of one's own kept.
out=$(CUDA_VISIBLE_DEVICES="GPU-aaa, 2,GPU-ccc" CUDA_DEVICE_ORDER=FASTEST_FIRST \
  "$src/tests/cluster/start" --hosts 2 --gpus-per-host 1 --state "$extra" 2>&1) || fail "start with CUDA_VISIBLE_DEVICES: $out"
printf 'node1 GPU-aaa FASTEST_FIRST\nnode2 2 FASTEST_FIRST\n' | cmp -s - "$extra/gpus" || fail "gpus: $(cat "$extra/gpus")"
[ "$("$extra/rsh" node2 "$show")" = "node2 2 FASTEST_FIRST unset" ] || fail "rsh node2: $("$extra/rsh" node2 "$show")"
links=$(grep '^link' "$extra/created" | awk '{ print $2 }')
"$src/tests/cluster/stop" "$extra" || fail "stop"
[ ! -e "$extra" ] || fail "stop left $extra"
for l in $links; do ! ip link show "$l" >/dev/null 2>&1 || fail "link $l left behind"; done

# Without the option: no gpus, the caller's environment as it was, no NCCL settings.
CUDA_VISIBLE_DEVICES=3 "$src/tests/cluster/start" --hosts 1 --state "$extra" >/dev/null 2>&1 || fail "start without --gpus-per-host"
[ ! -e "$extra/gpus" ] || fail "a gpus record without --gpus-per-host"
! grep -q NCCL "$extra/env" || fail "NCCL settings without --gpus-per-host: $(cat "$extra/env")"
[ "$(CUDA_VISIBLE_DEVICES=3 "$extra/rsh" node1 "$show")" = "node1 3 unset same-for-all" ] ||
  fail "rsh without --gpus-per-host: $(CUDA_VISIBLE_DEVICES=3 "$extra/rsh" node1 "$show")"
"$src/tests/cluster/stop" "$extra" || fail "stop"
echo "cluster --gpus-per-host: each host sees its GPUs through rsh, cluster_enter and mpirun's ranks; CUDA_VISIBLE_DEVICES honoured; no NCCL_HOSTID on the hosts; refusals before anything is made"
