# `cmake --install` into a temporary prefix: the installed binary, study files, sbatch scripts and
# docs; the installed study.sbatch under a real localhost Slurm (skips, saying why, without it).
scalebench_add_script_test(NAME install_prefix KIND cli LABELS install
                           COMMAND ${PROJECT_SOURCE_DIR}/tests/install/test_install.sh ${CMAKE_BINARY_DIR} prefix)
scalebench_add_script_test(NAME install_sbatch KIND slurm LABELS install SERIAL
                           COMMAND ${PROJECT_SOURCE_DIR}/tests/install/test_install.sh ${CMAKE_BINARY_DIR} sbatch)
