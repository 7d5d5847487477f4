# Multi-node tests on a test cluster started on this machine by each test (tests/cluster/start:
# hosts as network namespaces on a bridge, an rsh agent for mpirun, optionally an N-node Slurm)
# and stopped by it, also on failure. They skip, with the reason, where this is not root or
# namespaces, bridges or Slurm are not available. Serial: the hosts share this machine's cores.
set(SCALEBENCH_CLUSTER_TESTS
  "cluster_lifecycle\;test_lifecycle.sh"
  "cluster_iproute\;test_iproute.sh"
  "cluster_gpus_per_host\;test_gpus_per_host.sh"
  "cluster_cores_per_host\;test_cores_per_host.sh"
  "cluster_mpirun\;test_mpirun.sh"
  "cluster_mpirun_kill\;test_kill.sh"
  "cluster_host_lost\;test_host_lost.sh"
  "cluster_host_lost_mpirun\;test_host_lost_mpirun.sh"
  "cluster_shared\;test_shared.sh"
  "cluster_drivers\;test_drivers.sh"
  "cluster_summa2d\;test_summa2d.sh"
  "cluster_slurm\;test_slurm.sh\;pmix"
  "cluster_slurm_no_pmix_default\;test_slurm.sh\;none")
foreach(entry ${SCALEBENCH_CLUSTER_TESTS})
  list(POP_FRONT entry name script)
  scalebench_add_script_test(NAME ${name} KIND cluster COMMAND ${PROJECT_SOURCE_DIR}/tests/cluster/${script} ${entry}
                             TIMEOUT 300 SERIAL)
endforeach()
# GPUs on 2 hosts of the test cluster, NCCL between them over the cluster's links (test_gpu.sh:
# --gpus-per-host GPUs/2). A script test takes no GPUS, so it is declared here as a gpu test of 2
# GPUs would be: under `ctest --resource-spec-file` CTest gives it 2 GPUs no other test holds and
# tests/support/visible-gpus makes them the only ones it sees (2 hosts x 1 GPU); without a spec it
# takes every GPU it sees (4 GPUs: 2 x 2). Fewer than 2 GPUs, or a build without CUDA: skipped,
# saying why. Its kind is cluster: tools/gpu-suite (label gpu) does not run it; `ctest -R cluster_gpu`.
scalebench_add_script_test(NAME cluster_gpu KIND cluster
                           COMMAND ${PROJECT_SOURCE_DIR}/tests/support/visible-gpus ${PROJECT_SOURCE_DIR}/tests/cluster/test_gpu.sh
                           TIMEOUT 480 SERIAL)
set_tests_properties(cluster_gpu PROPERTIES RESOURCE_GROUPS "2,gpus:1")
# The node-shared distribution's MPI test program, run on 2 hosts by test_shared.sh.
set_property(TEST cluster_shared APPEND PROPERTY ENVIRONMENT
             SCALEBENCH_DISTRIBUTION_TEST=$<TARGET_FILE:test_gemm_distribution>)
# The peer watchdog (a host that goes silent ends the run) among the ranks of this machine, each
# rank posing as a host; its behaviour across real hosts is cluster_host_lost.
foreach(np 2 3)
  scalebench_add_test(NAME peer_watchdog KIND mpi SOURCES mpi/test_peer_watchdog.cpp RANKS ${np} TIMEOUT 120)
endforeach()
# SCALEBENCH_PEER_TIMEOUT's values under mpirun on this machine (no cluster needed).
scalebench_add_script_test(NAME peer_timeout_env KIND cli COMMAND ${PROJECT_SOURCE_DIR}/tests/cluster/test_peer_timeout_env.sh
                           TIMEOUT 300)
