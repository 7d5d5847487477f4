# Studies: `scalebench study` end to end under the real mpirun (CPU runs, small sizes), and the
# plots tools/report draws from them.
scalebench_add_test(NAME cli_study KIND cli SOURCES cli/test_cli_study.cpp cli/cli_runner.cpp TIMEOUT 600
                    WITHOUT_CUDA_CASES StudyCli.ABaselineThatCannotRunHereIsSkippedWithItsReason)
# The crossover against a named baseline, the contrast's probe-scaled sizes and the time left.
scalebench_add_test(NAME study_crossover KIND unit SOURCES unit/test_study_crossover.cpp TIMEOUT 30)
# The workload registry: names, figures of a record, contrast rows and sizes, phase kinds.
scalebench_add_test(NAME workloads KIND unit SOURCES unit/test_workloads.cpp TIMEOUT 30)
# report.html of a contrast and of a study, rendered in headless Chromium.
scalebench_add_test(NAME cli_report KIND cli SOURCES cli/test_cli_report.cpp cli/browser_check.cpp cli/cli_runner.cpp
  TIMEOUT 600)
# One rule for runs.jsonl lines: the drivers' reader and tools/report.py use and leave out the same
# lines of one fixture of bad lines.
scalebench_add_test(NAME runs_jsonl_rule KIND cli SOURCES cli/test_runs_jsonl_rule.cpp cli/cli_runner.cpp TIMEOUT 60)
