# The drivers' launch: hosts and hostfiles, srun's PMI type, allocation CPUs, a failed step's cause lines from real logs (unit); the launch commands, failure semantics and multinode records under the real
# mpirun on this host (cli).
scalebench_add_test(NAME launch KIND unit SOURCES unit/test_launch.cpp TIMEOUT 30)
scalebench_add_test(NAME cli_launch KIND cli SOURCES cli/test_cli_launch.cpp cli/cli_runner.cpp TIMEOUT 600)
target_compile_definitions(test_launch PRIVATE SCALEBENCH_TEST_DATA_DIR="${CMAKE_CURRENT_SOURCE_DIR}/data")
# A host lost mid-run named in one line, from Open MPI's texts (unit).
scalebench_add_test(NAME failure_lost_host KIND unit SOURCES unit/test_failure_lost_host.cpp TIMEOUT 30)
target_compile_definitions(test_failure_lost_host PRIVATE SCALEBENCH_TEST_DATA_DIR="${CMAKE_CURRENT_SOURCE_DIR}/data")
# The drivers' one sweep loop on its own (unit): the resume rule, progress lines, lines appended,
# failed, skipped and launch-failed runs counted, a stop between runs; /bin/true and /bin/false
# through the real step runner.
scalebench_add_test(NAME sweep KIND unit SOURCES unit/test_sweep.cpp TIMEOUT 60)
target_include_directories(test_sweep PRIVATE ${PROJECT_SOURCE_DIR}/src/drivers)
