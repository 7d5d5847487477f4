# shellcheck shell=bash
# Shared by the test Slurms (sourced): tests/slurm/localhost_slurm.sh (one node, this machine)
# and tests/cluster/slurm (one node per test-cluster host). Each caller defines skip MESSAGE
# (prints the reason, exits 77).
export PATH="$PATH:/usr/sbin"

# The cause in a daemon's log: its last error lines (the last line alone is often only "exiting"),
# else its last lines; on one line.
cause() {
  local lines
  lines=$(grep -aiE "error|fatal|fail|cannot|unable" "$1" 2>/dev/null | tail -3)
  [ -n "$lines" ] || lines=$(tail -3 "$1" 2>/dev/null)
  [ -n "$lines" ] || lines="no log at $1"
  printf '%s' "$lines" | tr '\n' '|' | sed 's/|/ | /g'
}

# Skips unless Slurm and munge are installed and this is root.
slurm_require() {
  local b
  for b in munged slurmctld slurmd sbatch srun sinfo; do
    command -v "$b" >/dev/null 2>&1 || skip "no Slurm here ($b not found; tools/setup installs slurm-wlm and munge)"
  done
  [ "$(id -u)" = 0 ] || skip "starting slurmd needs root here"
}

# munged with its own key, socket, pid and log in folder $1 (the system's munged, if any, is
# left alone).
munge_start() {
  local dir="$1"
  mkdir -p "$dir/log"
  dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
  chmod 400 "$dir/munge.key"
  munged --force --key-file="$dir/munge.key" --socket="$dir/munge.sock" --pid-file="$dir/munged.pid" \
    --log-file="$dir/log/munged.log" --seed-file="$dir/munge.seed" >/dev/null 2>&1 ||
    skip "munged did not start: $(cause "$dir/log/munged.log")"
}

# The slurm.conf lines every test Slurm shares: munge on folder $1's socket, state in $1, root
# as Slurm user, no cgroups (proctrack/linuxproc, task/none), the MPI default $2.
slurm_conf_common() {
  local dir="$1" mpi="$2"
  cat <<CONF
ClusterName=scalebenchtest
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmctldPidFile=$dir/slurmctld.pid
SlurmctldLogFile=$dir/log/slurmctld.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=$mpi
ReturnToService=2
SchedulerType=sched/builtin
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
CONF
}

# pmix when this Slurm's srun offers it (srun --mpi=list), else none.
slurm_mpi_auto() {
  if srun --mpi=list 2>&1 | grep -qw pmix; then echo pmix; else echo none; fi
}

# Waits up to 30 s for $1 idle nodes (SLURM_CONF set); skips with the cause in slurmd's log $2.
slurm_wait_idle() {
  local want="$1" log="$2"
  for _ in $(seq 1 60); do
    [ "$(sinfo -h -N -o %t 2>/dev/null | grep -c idle)" -ge "$want" ] && return 0
    sleep 0.5
  done
  skip "the test Slurm did not come up: $(cause "$log")"
}
