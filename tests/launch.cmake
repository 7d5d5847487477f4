# The drivers' launch: hosts and hostfiles, srun's PMI type, allocation CPUs (unit); the launch commands, failure semantics and multinode records under the real
# mpirun on this host (cli).
scalebench_add_test(NAME launch SOURCES unit/test_launch.cpp TIMEOUT 30)
scalebench_add_test(NAME cli_launch SOURCES cli/test_cli_launch.cpp cli/cli_runner.cpp LABELS cli TIMEOUT 600)
