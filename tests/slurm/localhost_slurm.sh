#!/usr/bin/env bash
# A real Slurm on this machine for the tests: munged, slurmctld and slurmd, each started here
# with its own key, socket, ports and state in one folder, and stopped by `stop`.
#   localhost_slurm.sh start DIR    -> prints SLURM_CONF=DIR/slurm.conf; exit 77 (with the
#                                      reason) where it cannot run here
#   localhost_slurm.sh stop DIR
set -euo pipefail
cmd="$1"; dir="$2"
skip() { echo "localhost_slurm.sh: Skipped"; echo "$1"; exit 77; }
# The cause in a daemon's log: its last error lines (the last line alone is often only "exiting"),
# else its last lines; on one line.
cause() {
  local lines
  lines=$(grep -aiE "error|fatal|fail|cannot|unable" "$1" 2>/dev/null | tail -3)
  [ -n "$lines" ] || lines=$(tail -3 "$1" 2>/dev/null)
  [ -n "$lines" ] || lines="no log at $1"
  printf '%s' "$lines" | tr '\n' '|' | sed 's/|/ | /g'
}
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
for b in munged slurmctld slurmd sbatch srun sinfo; do
  command -v "$b" >/dev/null 2>&1 || [ -x "/usr/sbin/$b" ] || skip "no Slurm here ($b not found; tools/setup installs slurm-wlm and munge)"
done
[ "$(id -u)" = 0 ] || skip "starting slurmd needs root here"
export PATH="$PATH:/usr/sbin"
mkdir -p "$dir/state" "$dir/spool" "$dir/log"
chmod 700 "$dir"
host=$(hostname -s)
# munge: its own key and socket (the system's munged, if any, is left alone).
dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
chmod 400 "$dir/munge.key"
munged --force --key-file="$dir/munge.key" --socket="$dir/munge.sock" --pid-file="$dir/munged.pid" \
  --log-file="$dir/log/munged.log" --seed-file="$dir/munge.seed" >/dev/null 2>&1 ||
  skip "munged did not start: $(cause "$dir/log/munged.log")"
# Free-looking ports from the folder's name, so that parallel tests do not collide.
base=$(( 20000 + ($(echo "$dir" | cksum | cut -d' ' -f1) % 20000) ))
cat > "$dir/slurm.conf" <<CONF
ClusterName=scalebenchtest
SlurmctldHost=$host(127.0.0.1)
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldPort=$base
SlurmdPort=$((base + 1))
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=pmix
ReturnToService=2
SchedulerType=sched/builtin
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -c >/dev/null 2>&1 || skip "slurmctld did not start: $(cause "$dir/log/slurmctld.log")"
slurmd >/dev/null 2>&1 || skip "slurmd did not start: $(cause "$dir/log/slurmd.log")"
for _ in $(seq 1 30); do
  if sinfo -h -o %t 2>/dev/null | grep -q idle; then echo "SLURM_CONF=$dir/slurm.conf"; exit 0; fi
  sleep 1
done
skip "the localhost Slurm did not come up: $(cause "$dir/log/slurmd.log")"
