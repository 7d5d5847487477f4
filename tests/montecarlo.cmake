# Monte Carlo tests: random numbers, the chunk tree, estimates against closed forms (fixed seeds,
# small sample counts: the whole set runs in seconds), bit-identical results for 1-4 ranks,
# CLI errors under mpirun, and CPU-vs-GPU identity on a GPU machine.
set(_mc ${CMAKE_CURRENT_LIST_DIR})
scalebench_add_test(NAME montecarlo_rng KIND unit
                    SOURCES ${_mc}/unit/test_montecarlo_rng.cpp LABELS montecarlo TIMEOUT 60)
scalebench_add_test(NAME montecarlo_tree KIND unit
                    SOURCES ${_mc}/unit/test_montecarlo_tree.cpp LABELS montecarlo TIMEOUT 60)
scalebench_add_test(NAME montecarlo_estimates KIND unit
                    SOURCES ${_mc}/unit/test_montecarlo_estimates.cpp LABELS montecarlo TIMEOUT 120)
scalebench_add_test(NAME montecarlo_config KIND unit
                    SOURCES ${_mc}/unit/test_montecarlo_config.cpp LABELS montecarlo TIMEOUT 60)
foreach(_ranks 1 2 3 4)
  scalebench_add_test(NAME montecarlo_ranks KIND mpi SOURCES ${_mc}/mpi/test_montecarlo_ranks.cpp RANKS ${_ranks}
                      LABELS montecarlo TIMEOUT 120)
endforeach()
scalebench_add_test(NAME montecarlo_cli KIND cli
                    SOURCES ${_mc}/unit/test_montecarlo_cli.cpp ${_mc}/cli/cli_runner.cpp LABELS montecarlo TIMEOUT 180
                    WITHOUT_CUDA_CASES MonteCarloCli.CurandInABuildWithoutCudaExitsSixOnEveryRank)
scalebench_add_test(NAME montecarlo_cuda KIND gpu SOURCES ${_mc}/cuda/test_montecarlo_cuda.cpp RANKS 1 GPUS 1
                    LABELS montecarlo TIMEOUT 180)
foreach(_ranks 1 2)
  scalebench_add_test(NAME montecarlo_cuda_ranks KIND gpu
                      SOURCES ${_mc}/cuda/test_montecarlo_cuda_ranks.cpp RANKS ${_ranks}
                      GPUS ${_ranks} LABELS montecarlo TIMEOUT 180)
endforeach()
# The cuRAND backend (the tutorials' materialise-then-reduce pattern): closed forms on one GPU,
# then on 1 and 2 ranks. Both skip without a visible GPU (the CPU-side checks are in
# montecarlo_config and montecarlo_cli).
scalebench_add_test(NAME montecarlo_curand KIND gpu SOURCES ${_mc}/cuda/test_montecarlo_curand.cpp RANKS 1 GPUS 1
                    LABELS montecarlo TIMEOUT 180)
foreach(_ranks 1 2)
  scalebench_add_test(NAME montecarlo_curand_ranks KIND gpu SOURCES ${_mc}/cuda/test_montecarlo_curand_ranks.cpp
                      RANKS ${_ranks} GPUS ${_ranks} LABELS montecarlo TIMEOUT 180)
endforeach()
# Does cuRAND's Philox device API reproduce the fused kernels' stream? A .cu test, so only in a
# CUDA build; it skips without a visible GPU.
if(SCALEBENCH_HAVE_CUDA)
  scalebench_add_test(NAME curand_philox_stream KIND gpu
                      SOURCES ${_mc}/cuda/test_curand_philox_stream.cu ${_mc}/cuda/curand_device_stream.cu
                      GPUS 1 LABELS montecarlo TIMEOUT 60)
  target_include_directories(test_curand_philox_stream PRIVATE ${PROJECT_SOURCE_DIR}/src/workloads/montecarlo/cuda)
  target_link_libraries(test_curand_philox_stream PRIVATE scalebench::random123 CUDA::cudart)
  target_compile_options(test_curand_philox_stream PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)
endif()
