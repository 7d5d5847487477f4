#!/usr/bin/env bash
# A real Slurm on this machine for the tests: munged, slurmctld and slurmd, each started here
# with its own key, socket, ports and state in one folder, and stopped by `stop`.
#   localhost_slurm.sh start DIR    -> prints SLURM_CONF=DIR/slurm.conf; exit 77 (with the
#                                      reason) where it cannot run here
#   localhost_slurm.sh stop DIR
# The pieces shared with the test cluster's Slurm are in slurm_common.sh.
set -euo pipefail
cmd="$1"; dir="$2"
skip() { echo "localhost_slurm.sh: Skipped"; echo "$1"; exit 77; }
# shellcheck source-path=SCRIPTDIR source=slurm_common.sh
. "$(dirname "${BASH_SOURCE[0]}")/slurm_common.sh"
if [ "$cmd" = stop ]; then
  for p in slurmd slurmctld munged; do
    [ -f "$dir/$p.pid" ] && kill "$(cat "$dir/$p.pid")" 2>/dev/null || true
  done
  sleep 1
  for p in slurmd slurmctld munged; do
    [ -f "$dir/$p.pid" ] && kill -9 "$(cat "$dir/$p.pid")" 2>/dev/null || true
  done
  exit 0
fi
slurm_require
mkdir -p "$dir/state" "$dir/spool" "$dir/log"
chmod 700 "$dir"
host=$(hostname -s)
munge_start "$dir"
# Free-looking ports from the folder's name, so that parallel tests do not collide.
base=$(( 20000 + ($(echo "$dir" | cksum | cut -d' ' -f1) % 20000) ))
{
  slurm_conf_common "$dir" pmix
  cat <<CONF
SlurmctldHost=$host(127.0.0.1)
SlurmdSpoolDir=$dir/spool
SlurmdPidFile=$dir/slurmd.pid
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldPort=$base
SlurmdPort=$((base + 1))
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
} >"$dir/slurm.conf"
export SLURM_CONF="$dir/slurm.conf"
slurmctld -c >/dev/null 2>&1 || skip "slurmctld did not start: $(cause "$dir/log/slurmctld.log")"
slurmd >/dev/null 2>&1 || skip "slurmd did not start: $(cause "$dir/log/slurmd.log")"
slurm_wait_idle 1 "$dir/log/slurmd.log"
echo "SLURM_CONF=$dir/slurm.conf"
