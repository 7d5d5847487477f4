# Sourced by slurm/*.sbatch (from the repository's slurm/ or an installed share/scalebench/slurm/):
# finds the binary and a study file, and chooses the PMI type of the srun steps.
#   bin           $SCALEBENCH, else build/scalebench in the submit folder, else scalebench on PATH
#   SLURM_MPI_TYPE  kept if set (srun's own variable, e.g. pmix, pmi2, none); else pmix when this
#                 Slurm's srun offers it (`srun --mpi=list`); else unset (the site's MpiDefault).
#                 Open MPI 4 and 5 start only under PMIx: with MpiDefault=none their ranks fail
#                 to start ("OPAL ERROR: Unreachable").
# The including script sets sbatch_name (for messages).
# shellcheck shell=bash
sbatch_share="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sbatch_fail() { echo "$sbatch_name: $*" >&2; exit 2; }
if [ -n "${SCALEBENCH:-}" ]; then
  bin="$SCALEBENCH"
elif [ -x "${SLURM_SUBMIT_DIR:-.}/build/scalebench" ]; then
  bin="${SLURM_SUBMIT_DIR:-.}/build/scalebench"
else
  bin="$(command -v scalebench || true)"
fi
[ -n "$bin" ] && [ -x "$bin" ] ||
  sbatch_fail "no scalebench: set SCALEBENCH, submit from a built repository (build/scalebench) or put an installed scalebench on PATH"
# A study file given relative: from the submit folder, else among the installed ones.
sbatch_study() {
  local f="$1"
  if [ -f "$f" ] || [[ "$f" = /* ]]; then echo "$f"; return; fi
  if [ -f "$sbatch_share/$f" ]; then echo "$sbatch_share/$f"; return; fi
  echo "$f"
}
if [ -z "${SLURM_MPI_TYPE:-}" ] && srun --mpi=list 2>&1 | grep -qw pmix; then
  export SLURM_MPI_TYPE=pmix
fi
if [ -n "${SLURM_MPI_TYPE:-}" ]; then
  sbatch_mpi="--mpi=$SLURM_MPI_TYPE (SLURM_MPI_TYPE)"
else
  sbatch_mpi="the site's MpiDefault ($(scontrol show config 2>/dev/null | awk '$1 == "MpiDefault" { print $3 }'); srun offers no pmix)"
fi
echo "$sbatch_name: scalebench is $bin; srun steps use $sbatch_mpi"
