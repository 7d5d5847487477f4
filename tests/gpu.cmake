# GPU: the cuBLAS backend, GPU selection, the NCCL transport, and `gemm --backend cublas`.
# A test executable skips as a whole or not at all (CTest marks it skipped, failures included,
# as soon as one test in it skips): each file below has one condition, stated in its header.
# GPUS is what each uses under a resource spec file (cmake/ScalebenchTest.cmake, tools/gpu-suite):
# one GPU per rank, one GPU where ranks share it.
#   gemm_cli_backend  never skips: in CI `--backend cublas` must exit 3 (6 without CUDA).
#   gemm_cublas, gemm_gpu_ranks, gemm_cli_gpu   need a visible GPU.
#   gemm_gpu_nccl     needs one visible GPU per rank.
#   gemm_gpu_shared   --distribution shared; needs one visible GPU per rank.
#   gemm_gpu_share    two ranks on GPU 0 (CUDA_VISIBLE_DEVICES=0), needs a visible GPU.
#   device_primitives copies, streams, events and the device all-gather; one visible GPU per rank.
scalebench_add_test(NAME gemm_cli_backend KIND gpu SOURCES cuda/test_gemm_cli_backend.cpp cli/cli_runner.cpp
                    GPUS 1 TIMEOUT 300)
scalebench_add_test(NAME gemm_cublas KIND gpu SOURCES cuda/test_gemm_cublas.cpp RANKS 1 GPUS 1 TIMEOUT 300)
# Two GPUs: the energy of every GPU of the node, and ranks beyond the GPUs.
scalebench_add_test(NAME gemm_cli_gpu KIND gpu SOURCES cuda/test_gemm_cli_gpu.cpp cli/cli_runner.cpp GPUS 2
                    TIMEOUT 600)
foreach(np 1 2)
  scalebench_add_test(NAME gemm_gpu_ranks KIND gpu SOURCES cuda/test_gemm_gpu_ranks.cpp RANKS ${np} GPUS ${np}
                      TIMEOUT 300)
endforeach()
# Every Row1D schedule between GPUs on 1, 2, 4 and 8 (skipped, saying so, without a GPU per rank).
foreach(np 1 2 4 8)
  scalebench_add_test(NAME gemm_gpu_nccl KIND gpu SOURCES cuda/test_gemm_gpu_nccl.cpp RANKS ${np} GPUS ${np}
                      TIMEOUT 300)
  scalebench_add_test(NAME gemm_gpu_shared KIND gpu SOURCES cuda/test_gemm_gpu_shared.cpp RANKS ${np} GPUS ${np}
                      TIMEOUT 300)
endforeach()
scalebench_add_test(NAME gemm_gpu_share KIND gpu SOURCES cuda/test_gemm_gpu_share.cpp RANKS 2 GPUS 1 TIMEOUT 300)
# Without a resource spec file: GPU 0 (with one, the GPU CTest gave it).
set_property(TEST gemm_gpu_share_np2 APPEND PROPERTY ENVIRONMENT CUDA_VISIBLE_DEVICES=0)
foreach(np 1 2 4 8)
  scalebench_add_test(NAME device_primitives KIND gpu SOURCES cuda/test_device_primitives.cpp RANKS ${np}
                      GPUS ${np} TIMEOUT 120)
endforeach()
# The host transport's all-gather, the device one's reference (CPU only: runs everywhere).
foreach(np 1 3)
  scalebench_add_test(NAME transport_all_gather KIND mpi SOURCES mpi/test_transport_all_gather.cpp RANKS ${np}
                      TIMEOUT 60)
endforeach()
# The host transport with the shared distribution's B lanes on the device transport, over a
# stand-in device transport (CPU only: runs everywhere; the NCCL one is device_primitives').
foreach(np 1 3)
  scalebench_add_test(NAME lanes_on_device KIND mpi SOURCES mpi/test_lanes_on_device.cpp RANKS ${np} TIMEOUT 60)
endforeach()
# Row1D's GPU schedules over a stand-in device of host memory (CPU only: runs everywhere).
foreach(np 1 2 3)
  scalebench_add_test(NAME row1d_gpu_schedules KIND mpi SOURCES mpi/test_row1d_gpu_schedules.cpp RANKS ${np}
                      TIMEOUT 120)
endforeach()
# The --overlap schedule's cut (CPU only: runs everywhere).
scalebench_add_test(NAME overlap_plan KIND unit SOURCES unit/test_overlap_plan.cpp TIMEOUT 30)
# tools/gpu-resources against a stand-in nvidia-smi, and tests/support/visible-gpus under a real
# ctest with that spec: each test sees only the GPUs it was given (no GPU needed).
scalebench_add_script_test(NAME gpu_resources KIND cli COMMAND ${CMAKE_CURRENT_LIST_DIR}/cli/test_gpu_resources.sh
                           TIMEOUT 120)
