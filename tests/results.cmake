# Results folders: never written through a link, never replacing a file an earlier runs.jsonl line
# names, a resume that continues its plan on its host or is refused, one calibration a profile at a
# time. Its contrasts run with --no-calibrate; its calibrations use a cache folder of their own.
scalebench_add_test(NAME cli_results_links KIND cli SOURCES cli/test_cli_results_links.cpp cli/cli_runner.cpp
                    TIMEOUT 600)
# The figures the drivers' tables print: legible at the ends of the record rule's ranges, never
# inf or nan, a ratio only where it is finite.
scalebench_add_test(NAME unit_figure_text KIND unit SOURCES unit/test_figure_text.cpp TIMEOUT 30)
