# `scalebench compare`: its statistics against known values, and the command on synthetic records
# with known shifts, folders with extra and missing runs, a history, hostile inputs, and its --report page
# (rendered in headless Chromium where it is installed).
scalebench_add_test(NAME unit_compare_stats KIND unit SOURCES unit/test_compare_stats.cpp TIMEOUT 30)
scalebench_add_test(NAME cli_compare KIND cli SOURCES cli/test_cli_compare.cpp cli/browser_check.cpp cli/cli_runner.cpp
  TIMEOUT 300)
