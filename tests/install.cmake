# `cmake --install` into a temporary prefix: the installed binary, study files, sbatch scripts and
# docs; the installed study.sbatch under a real localhost Slurm (skips, saying why, without it).
scalebench_add_script_test(NAME install_prefix KIND cli LABELS install
                           COMMAND ${PROJECT_SOURCE_DIR}/tests/install/test_install.sh ${CMAKE_BINARY_DIR} prefix)
scalebench_add_script_test(NAME install_sbatch KIND slurm LABELS install SERIAL
                           COMMAND ${PROJECT_SOURCE_DIR}/tests/install/test_install.sh ${CMAKE_BINARY_DIR} sbatch)
# tools/run builds only the scalebench binary, tools/check the test programs too (their build plans
# on a fresh folder, read from dry runs).
scalebench_add_script_test(NAME tools_build_plan KIND cli LABELS install TIMEOUT 300
                           COMMAND ${PROJECT_SOURCE_DIR}/tests/install/test_tools_build_plan.sh ${PROJECT_SOURCE_DIR}
                                   ${CMAKE_BINARY_DIR}/test-tmp/tools-build-plan)
# versions.git from a tree `git archive` exported, unpacked inside another git repository.
scalebench_add_script_test(NAME exported_revision KIND cli LABELS install TIMEOUT 120
                           COMMAND ${PROJECT_SOURCE_DIR}/tests/install/test_exported_revision.sh ${PROJECT_SOURCE_DIR}
                                   ${CMAKE_BINARY_DIR}/test-tmp/exported-revision)
