# The performance model: hand-worked answers on a synthetic profile (unit), and calibrate, records
# with predictions and predict end to end under the real mpirun (cli).
set(_model ${CMAKE_CURRENT_LIST_DIR})
scalebench_add_test(NAME model KIND unit SOURCES ${_model}/unit/test_model.cpp LABELS model TIMEOUT 60)
# Energy: the profile's power section and the joules of a job, by hand (unit).
scalebench_add_test(NAME energy_model KIND unit SOURCES ${_model}/unit/test_energy_model.cpp LABELS model TIMEOUT 60)
# Ranks evaluated by class: the classes against every rank, predictions against rank-by-rank sums,
# and 2^22 ranks with every `auto` alternative ranked in seconds.
scalebench_add_test(NAME model_classes KIND unit SOURCES ${_model}/unit/test_model_classes.cpp LABELS model
                    TIMEOUT 120)
# `auto`: the ranking on synthetic profiles (unit), and the real binary's runs and predict (cli).
scalebench_add_test(NAME choice KIND unit SOURCES ${_model}/unit/test_choice.cpp LABELS model TIMEOUT 60)
scalebench_add_test(NAME choice_cli KIND cli SOURCES ${_model}/cli/test_cli_choice.cpp ${_model}/cli/cli_runner.cpp
                    LABELS model TIMEOUT 300)
# calibrate under a counter that steps back: no idle watts reach the profile.
scalebench_add_test(NAME energy_calibrate_cli KIND cli SOURCES ${_model}/cli/test_cli_energy_calibrate.cpp
                    ${_model}/cli/cli_runner.cpp LABELS model TIMEOUT 600)
scalebench_add_test(NAME model_cli KIND cli SOURCES ${_model}/cli/test_cli_model.cpp ${_model}/cli/cli_runner.cpp
                    LABELS model TIMEOUT 600)
# A profile with a field of the wrong kind: predict refuses it, contrast and calibrate --if-stale
# take it for stale (one calibration, single process).
scalebench_add_test(NAME profile_types_cli KIND cli SOURCES ${_model}/cli/test_cli_profile_types.cpp
                    ${_model}/cli/cli_runner.cpp LABELS model TIMEOUT 600
                    WITHOUT_CUDA_CASES BadProfile.TheStartingProfileIsCurrent)
# A plain run's prediction within a factor 2 of its measurement, on the test_profile fixture's
# profile (tests/CMakeLists.txt): gemm on 1 and 2 ranks, Monte Carlo. Serial: a plain run uses every
# CPU, and a test beside it would halve its speed (about 10 s alone on the 2-core box).
scalebench_add_test(NAME model_accuracy KIND cli SOURCES ${_model}/cli/test_cli_model_accuracy.cpp
                    ${_model}/cli/cli_runner.cpp LABELS model TIMEOUT 300)
set_tests_properties(model_accuracy PROPERTIES RUN_SERIAL TRUE)
scalebench_add_test(NAME record_prediction KIND cli SOURCES ${_model}/cli/test_record_prediction.cpp
                    ${_model}/cli/cli_runner.cpp LABELS model TIMEOUT 300)
scalebench_add_test(NAME model_calibration KIND unit SOURCES ${_model}/unit/test_model_calibration.cpp LABELS model
                    TIMEOUT 60)
scalebench_add_test(NAME calibrate_wait KIND mpi SOURCES ${_model}/mpi/test_calibrate_wait.cpp RANKS 2 LABELS model
                    TIMEOUT 60)
scalebench_add_test(NAME tools_run KIND cli SOURCES ${_model}/cli/test_cli_tools_run.cpp ${_model}/cli/cli_runner.cpp
                    LABELS model TIMEOUT 600)
# tools/misses: the miss distribution over fixture records with known misses, and its refusals.
scalebench_add_test(NAME misses KIND cli SOURCES ${_model}/cli/test_cli_misses.cpp ${_model}/cli/cli_runner.cpp
                    LABELS model TIMEOUT 120)
# tools/auto-check: a small study run with its schedule left to auto, every alternative pinned, and
# its refusals.
scalebench_add_test(NAME auto_check KIND cli SOURCES ${_model}/cli/test_cli_auto_check.cpp ${_model}/cli/cli_runner.cpp
                    LABELS model TIMEOUT 300)
# tools/misses, auto-check and energy-check given hostile files and failing children (fakes of the
# binary, the measured run and nvidia-smi): one line and the documented code, nothing left behind.
scalebench_add_test(NAME tools_input KIND cli SOURCES ${_model}/cli/test_cli_tools_input.cpp
                    ${_model}/cli/cli_runner.cpp LABELS model TIMEOUT 300)
# calibrate's check times its figures again when the machine was busier while they were taken
# (two busy loops per CPU during the CPU figures; a second try where the first escaped the load).
# Serial: it loads every CPU.
scalebench_add_script_test(NAME calibrate_retime KIND cli COMMAND ${_model}/cli/test_calibrate_retime.sh LABELS model
                           TIMEOUT 420 SERIAL)
# tools/record-shape (the records of a fixed set of runs compared apart from what was measured):
# two runs of the set the same, changes named, failing runs named, bad input refused.
scalebench_add_script_test(NAME tools_record_shape KIND cli COMMAND ${_model}/cli/test_tools_record_shape.sh
                           LABELS tools TIMEOUT 300)
# tools/bench_pi_numpy.py (estimate, record, exit codes) and tools/bench's table from records of
# known figures (tools/bench --table).
scalebench_add_script_test(NAME tools_bench KIND cli COMMAND ${_model}/cli/test_tools_bench.sh LABELS tools
                           TIMEOUT 120)
