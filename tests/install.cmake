# `cmake --install` into a temporary prefix: the installed binary, study files, sbatch scripts and
# docs; the installed study.sbatch under a real localhost Slurm (skips, saying why, without it).
add_test(NAME install_prefix COMMAND ${PROJECT_SOURCE_DIR}/tests/install/test_install.sh ${CMAKE_BINARY_DIR} prefix)
add_test(NAME install_sbatch COMMAND ${PROJECT_SOURCE_DIR}/tests/install/test_install.sh ${CMAKE_BINARY_DIR} sbatch)
set_tests_properties(install_prefix install_sbatch PROPERTIES ENVIRONMENT "${SCALEBENCH_TEST_ENV}"
                     SKIP_RETURN_CODE 77 LABELS "install;cli" TIMEOUT 300)
set_tests_properties(install_sbatch PROPERTIES LABELS "install;slurm" RUN_SERIAL TRUE)
