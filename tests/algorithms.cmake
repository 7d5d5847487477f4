# The distributed algorithms: Summa2D on every grid of 1 to 9 ranks against Row1D and the exact
# product (9 ranks oversubscribe a small machine: the sizes stay small).
foreach(np 1 2 3 4 6 9)
  scalebench_add_test(NAME gemm_algorithms KIND mpi SOURCES mpi/test_gemm_algorithms.cpp RANKS ${np} TIMEOUT 180)
endforeach()
scalebench_add_test(NAME cli_gemm_algorithms KIND cli SOURCES cli/test_cli_gemm_algorithms.cpp cli/cli_runner.cpp
                    TIMEOUT 300)
# Summa2D with the cuBLAS local multiply: needs a visible GPU (skips with the reason otherwise).
foreach(np 1 2)
  scalebench_add_test(NAME gemm_gpu_summa KIND gpu SOURCES cuda/test_gemm_gpu_summa.cpp RANKS ${np} GPUS ${np}
                      TIMEOUT 300)
endforeach()
# Summa2D over NCCL, the blocks on the devices: needs one visible GPU per rank (skips otherwise).
foreach(np 1 2)
  scalebench_add_test(NAME gemm_gpu_summa_nccl KIND gpu SOURCES cuda/test_gemm_gpu_summa_nccl.cpp RANKS ${np}
                      GPUS ${np} TIMEOUT 300)
endforeach()
# Summa2D's lookahead with cuBLAS, over NCCL (the panels' own stream) and over the host, against
# its blocking broadcasts: needs a visible GPU (one per rank for NCCL; skips with the reason).
foreach(np 1 2)
  scalebench_add_test(NAME gemm_gpu_summa_lookahead KIND gpu SOURCES cuda/test_gemm_gpu_summa_lookahead.cpp
                      RANKS ${np} GPUS ${np} TIMEOUT 300)
endforeach()
# Row1D's node-shared distribution against the replicated one, 1 to 4 ranks on one node.
foreach(np 1 2 3 4)
  scalebench_add_test(NAME gemm_distribution KIND mpi SOURCES mpi/test_gemm_distribution.cpp RANKS ${np} TIMEOUT 120)
endforeach()
# --distribution shared where the shared-memory backing folder cannot hold the windows (a 64 MiB
# /dev/shm; the folder missing, a file, read-only, full): the agreed fallback to replicated, in a
# private mount namespace (skips, saying why, where that is not permitted).
scalebench_add_script_test(NAME gemm_distribution_backing KIND cli TIMEOUT 600
                           COMMAND ${PROJECT_SOURCE_DIR}/tests/mpi/test_shared_backing.sh)
# The same on 2 hosts of the test cluster (tests/cluster/start), only the second host's /dev/shm
# too small: each host checks its own, every rank falls back together (skips, saying why, where
# the cluster cannot start).
scalebench_add_script_test(NAME cluster_distribution_backing KIND cluster TIMEOUT 300 SERIAL
                           COMMAND ${PROJECT_SOURCE_DIR}/tests/cluster/test_shared_backing.sh)
# The node-shared windows' pages faulted in before they are written: no room is an error, not a SIGBUS.
scalebench_add_test(NAME shared_window_prefault KIND unit SOURCES unit/test_shared_prefault.cpp)
# The record's communication bound against the transport's counts and hand-worked cases.
scalebench_add_test(NAME cli_comm_bound KIND cli SOURCES cli/test_cli_comm_bound.cpp cli/cli_runner.cpp TIMEOUT 120)
# ScaLAPACK's PDGEMM as the gemm run's peer (--peer scalapack): its product on every grid of 1, 2
# and 4 ranks, the k-step PBLAS used, the record (skips, saying why, in a build without ScaLAPACK).
foreach(np 1 2 4)
  scalebench_add_test(NAME scalapack_peer KIND mpi SOURCES mpi/test_scalapack_peer.cpp RANKS ${np} TIMEOUT 60)
endforeach()
target_include_directories(test_scalapack_peer PRIVATE ${CMAKE_BINARY_DIR}/layers/peers)
# A build without ScaLAPACK, in every build: the stub linked in place of the library refuses the peer.
scalebench_add_test(NAME scalapack_stub KIND mpi SOURCES mpi/test_scalapack_stub.cpp
                    ${PROJECT_SOURCE_DIR}/src/peers/scalapack_stub.cpp RANKS 1 TIMEOUT 60)
target_include_directories(test_scalapack_stub PRIVATE ${CMAKE_BINARY_DIR}/layers/peers)
scalebench_add_test(NAME cli_scalapack_peer KIND cli SOURCES cli/test_cli_scalapack_peer.cpp cli/cli_runner.cpp
                    TIMEOUT 300)
# Summa2D's lookahead (the ring and direct panel schedules) against its blocking broadcasts on the
# grids of 1 to 16 ranks (4x4 among them), and a slowed rank on 3x3 (9 and 16 ranks oversubscribe a
# small machine: the sizes stay small).
foreach(np 1 4 6 9 16)
  scalebench_add_test(NAME summa_lookahead KIND mpi SOURCES mpi/test_summa_lookahead.cpp RANKS ${np} TIMEOUT 120)
endforeach()
