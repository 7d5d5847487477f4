# Foundation: partition, verification, collectives, the distributed multiply, the CLI, records.
scalebench_add_test(NAME partition KIND unit SOURCES unit/test_partition.cpp TIMEOUT 30)
scalebench_add_test(NAME verify KIND unit SOURCES unit/test_verify.cpp TIMEOUT 60)
scalebench_add_test(NAME gemm_fill KIND unit SOURCES unit/test_gemm_fill.cpp TIMEOUT 60)
scalebench_add_test(NAME comm_bound KIND unit SOURCES unit/test_comm_bound.cpp TIMEOUT 30)
scalebench_add_test(NAME parse KIND unit SOURCES unit/test_parse.cpp TIMEOUT 30)
scalebench_add_test(NAME unit_checked_size KIND unit SOURCES unit/test_checked_size.cpp TIMEOUT 30)
scalebench_add_test(NAME unit_input_file KIND unit SOURCES unit/test_input_file.cpp TIMEOUT 30)
# The checked JSON accessor every field read from a file goes through.
scalebench_add_test(NAME unit_json_field KIND unit SOURCES unit/test_json_field.cpp TIMEOUT 30)
# Energy counters: a fake powercap tree (two sockets, DRAM, wrap-around, unreadable), NVML absent;
# counters that step back, vanish, turn into FIFOs, huge files or garbage: not counted.
scalebench_add_test(NAME energy KIND unit SOURCES unit/test_energy.cpp TIMEOUT 30)
scalebench_add_test(NAME energy_cli KIND cli SOURCES cli/test_cli_energy.cpp cli/cli_runner.cpp TIMEOUT 300)
# The energy section of a repeat over a fake counter a test thread advances: the timed interval's
# joules apart from the whole repeat's; a read failing inside the timed interval, or only in the
# check, is not counted and said where (one rank; two, the slower one setting the timed interval).
foreach(np 1 2)
  scalebench_add_test(NAME energy_run KIND mpi SOURCES mpi/test_energy_run.cpp RANKS ${np} TIMEOUT 120)
endforeach()
scalebench_add_test(NAME blas_dimensions KIND unit SOURCES unit/test_blas_dimensions.cpp TIMEOUT 30)
foreach(np 1 2 3 4)
  scalebench_add_test(NAME collectives KIND mpi SOURCES mpi/test_collectives.cpp RANKS ${np} TIMEOUT 120)
  scalebench_add_test(NAME phase_agreement KIND mpi SOURCES mpi/test_phase_agreement.cpp RANKS ${np} TIMEOUT 60)
  scalebench_add_test(NAME gemm_ranks KIND mpi SOURCES mpi/test_gemm_ranks.cpp RANKS ${np} TIMEOUT 300)
endforeach()
scalebench_add_test(NAME cli_gemm KIND cli SOURCES cli/test_cli_gemm.cpp cli/cli_runner.cpp TIMEOUT 600)
scalebench_add_test(NAME record_schema KIND cli SOURCES cli/test_record_schema.cpp cli/cli_runner.cpp TIMEOUT 120)
scalebench_add_test(NAME cli_contrast KIND cli SOURCES cli/test_cli_contrast.cpp cli/cli_runner.cpp TIMEOUT 600)
scalebench_add_test(NAME cli_gemm_guards KIND cli SOURCES cli/test_cli_gemm_guards.cpp cli/cli_runner.cpp TIMEOUT 300
                    WITHOUT_CUDA_CASES GpuRequest.NamesTheBackendAndSaysBuiltWithoutCudaWhereThatIsWhy)
# Options as input: an empty value for every option with one, checked sums and products, predict's
# huge values, row1d's lookahead and panel width (cli).
scalebench_add_test(NAME cli_option_values KIND cli SOURCES cli/test_cli_option_values.cpp cli/cli_runner.cpp
                    TIMEOUT 300)
