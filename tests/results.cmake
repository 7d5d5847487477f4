# Results folders: never written through a link, never replacing a file an earlier runs.jsonl line
# names, a resume that continues its plan on its host or is refused, one calibration a profile at a
# time. Its contrasts run with --no-calibrate; its calibrations use a cache folder of their own.
scalebench_add_test(NAME cli_results_links KIND cli SOURCES cli/test_cli_results_links.cpp cli/cli_runner.cpp
                    TIMEOUT 600)
