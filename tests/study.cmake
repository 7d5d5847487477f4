# Studies: `scalebench study` end to end under the real mpirun (CPU runs, small sizes), and the
# plots tools/report draws from them.
scalebench_add_test(NAME cli_study SOURCES cli/test_cli_study.cpp cli/cli_runner.cpp LABELS cli TIMEOUT 600)
