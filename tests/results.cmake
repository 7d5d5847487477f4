# Results folders: never written through a link, never replacing a file an earlier runs.jsonl line
# names, a resume that continues its plan on its host or is refused, one calibration a profile at a
# time. Its contrasts share the tests' profile (tests/CMakeLists.txt, test_profile).
scalebench_add_test(NAME cli_results_links KIND cli SOURCES cli/test_cli_results_links.cpp cli/cli_runner.cpp
                    TIMEOUT 600)
set_tests_properties(cli_results_links PROPERTIES FIXTURES_REQUIRED test_profile ENVIRONMENT_MODIFICATION
  "SCALEBENCH_PROFILE=unset:;XDG_CACHE_HOME=set:${CMAKE_BINARY_DIR}/test-cache-profiled")
