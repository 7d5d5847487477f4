# slurm/*.sbatch under a real Slurm (munged, slurmctld, slurmd) started on this machine by the
# test itself; skipped, with the reason, where Slurm is not installed (tools/setup installs
# slurm-wlm and munge where apt-get can) or cannot start. Serial: the one Slurm node is this
# machine's CPUs.
add_test(NAME slurm_localhost COMMAND ${PROJECT_SOURCE_DIR}/tests/slurm/test_slurm.sh)
set_tests_properties(slurm_localhost PROPERTIES ENVIRONMENT "${SCALEBENCH_TEST_ENV}" SKIP_RETURN_CODE 77
                     LABELS "slurm;cli" TIMEOUT 900 RUN_SERIAL TRUE)
