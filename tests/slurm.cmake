# slurm/*.sbatch under a real Slurm (munged, slurmctld, slurmd) started on this machine by the
# test itself; skipped, with the reason, where Slurm is not installed (tools/setup installs
# slurm-wlm and munge where apt-get can) or cannot start. Serial: the one Slurm node is this
# machine's CPUs.
scalebench_add_script_test(NAME slurm_localhost KIND slurm COMMAND ${PROJECT_SOURCE_DIR}/tests/slurm/test_slurm.sh
                           TIMEOUT 900 SERIAL)
