# Every test is declared through one of two helpers and has exactly one kind label:
#   unit     in-process library tests, fast (seconds)
#   mpi      library code under `mpiexec -n RANKS` (several ranks)
#   cli      runs the scalebench binary (often under mpirun itself): minutes
#   gpu      needs a visible GPU (skips, with the reason, without one) or checks what the GPU
#            backends say on a machine without one
#   slurm    under a real Slurm started by the test on this machine
#   cluster  on the test cluster (network namespaces) started by the test
# `ctest -L '^unit$'` runs the unit tests only; docs/building.md, "Tests and checks", lists the others.
# Area labels (LABELS: topology, montecarlo, model, install, ...) may be added; a kind name is not
# an area label.
#
#   scalebench_add_test(NAME n KIND unit|mpi|cli|gpu SOURCES f.cpp... [RANKS r] [GPUS g] [LABELS area...]
#                       [TIMEOUT s] [WITHOUT_CUDA_CASES case...])
# builds test_<n> from SOURCES. RANKS makes it an MPI test run as `mpiexec -n r` and named
# n_np<r> (kind mpi needs RANKS; kind unit and cli take none). A test executable counts as skipped
# (exit 77) only when all its tests skipped and none failed.
# GPUS (kind gpu, required there): the GPUs the test uses, each its own. Under
# `ctest --resource-spec-file` (tools/gpu-resources writes one from nvidia-smi; tools/gpu-suite
# runs the gpu label so) CTest gives the test g GPUs no other test holds meanwhile (RESOURCE_GROUPS
# "g,gpus:1") and tests/support/visible-gpus makes them the only ones it sees (CUDA_VISIBLE_DEVICES):
# GPU tests run side by side, one per free GPU. Without a spec file the test sees every GPU, as before.
# WITHOUT_CUDA_CASES (a test of one process): GoogleTest cases (Suite.Case) whose path exists only
# in a build without CUDA. They run apart, as test n_without_cuda with the area label without_cuda,
# and test n runs the rest; a build with CUDA skips them (they say so), and the CPU-only sanitizer
# build runs them by that label.
#   scalebench_add_script_test(NAME n KIND cli|slurm|cluster COMMAND cmd... [LABELS area...]
#                              [TIMEOUT s] [SERIAL])
# runs a script; SERIAL: alone (it uses every core, or a daemon of this machine).
find_package(GTest REQUIRED)

set(SCALEBENCH_TEST_KINDS unit mpi cli gpu slurm cluster)

set(SCALEBENCH_TEST_ENV
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
  OMPI_MCA_hwloc_base_binding_policy=none
  SCALEBENCH_BINARY=$<TARGET_FILE:scalebench>
  SCALEBENCH_SOURCE_DIR=${PROJECT_SOURCE_DIR}
  SCALEBENCH_MPIEXEC=${MPIEXEC_EXECUTABLE}
  # The machine profile a user calibrated (~/.cache) is not the tests': each build has its own
  # cache folder, empty unless a test calibrates into it.
  XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/test-cache
  # The CLI tests' folders (make_temp_dir) live in the build folder: a test its time limit kills
  # cannot remove its own, and what it leaves goes with the build, not into /tmp.
  SCALEBENCH_TEST_TMPDIR=${CMAKE_BINARY_DIR}/test-tmp)
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/test-tmp)

add_library(scalebench_gtest_main_serial STATIC ${PROJECT_SOURCE_DIR}/tests/support/gtest_main_serial.cpp)
target_link_libraries(scalebench_gtest_main_serial PUBLIC GTest::gtest scalebench_core)
add_library(scalebench_gtest_main_mpi STATIC ${PROJECT_SOURCE_DIR}/tests/support/gtest_main_mpi.cpp)
target_link_libraries(scalebench_gtest_main_mpi PUBLIC GTest::gtest scalebench_core)
foreach(lib scalebench_gtest_main_serial scalebench_gtest_main_mpi)
  target_include_directories(${lib} PUBLIC ${PROJECT_SOURCE_DIR}/tests/support ${PROJECT_SOURCE_DIR}/src)
endforeach()

# The test programs' own code is compiled at -O1 (it sets up and checks; what is timed is the
# library it links, built as the build type says) over one precompiled header of what most test
# files include: GoogleTest, nlohmann-json and the standard headers. A test file then compiles in
# about half the time (17 s at -O3 without, 9 s with, on the 2-core box). A test program with
# CUDA sources compiles them as before.
add_library(scalebench_test_pch OBJECT ${PROJECT_SOURCE_DIR}/tests/support/test_pch.cpp)
target_link_libraries(scalebench_test_pch PRIVATE scalebench_gtest_main_serial scalebench_core scalebench_gpu
                      scalebench_warnings)
target_compile_options(scalebench_test_pch PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-O1>)
target_precompile_headers(scalebench_test_pch PRIVATE <gtest/gtest.h> <nlohmann/json.hpp> <algorithm> <cmath>
                          <cstdlib> <fstream> <string> <vector>)
add_library(scalebench_cli_runner STATIC ${PROJECT_SOURCE_DIR}/tests/cli/cli_runner.cpp)
target_link_libraries(scalebench_cli_runner PUBLIC GTest::gtest scalebench_core scalebench_gpu
                      PRIVATE scalebench_warnings)
target_include_directories(scalebench_cli_runner PUBLIC ${PROJECT_SOURCE_DIR}/tests/support ${PROJECT_SOURCE_DIR}/src)
target_compile_options(scalebench_cli_runner PRIVATE -O1)
target_precompile_headers(scalebench_cli_runner REUSE_FROM scalebench_test_pch)

# Checks test `name`'s arguments (none unknown: `unparsed` empty; a KIND of `allowed`; no kind
# among the area labels) and sets in the caller `labels` (its kind, then its area labels) and
# `timeout` (TIMEOUT, else `default_timeout`).
function(_scalebench_test_arguments name kind allowed areas unparsed timeout default_timeout)
  if(unparsed)
    message(FATAL_ERROR "test ${name}: unknown arguments ${unparsed}")
  endif()
  if(NOT kind)
    message(FATAL_ERROR "test ${name}: KIND is required (one of: ${allowed})")
  endif()
  if(NOT kind IN_LIST allowed)
    message(FATAL_ERROR "test ${name}: KIND ${kind} is not one of: ${allowed}")
  endif()
  foreach(label ${areas})
    if(label IN_LIST SCALEBENCH_TEST_KINDS)
      message(FATAL_ERROR "test ${name}: '${label}' is a kind, not an area label: a test has one KIND")
    endif()
  endforeach()
  set(labels ${kind} ${areas} PARENT_SCOPE)
  if(NOT timeout)
    set(timeout ${default_timeout})
  endif()
  set(timeout ${timeout} PARENT_SCOPE)
endfunction()

# What every test has: its time limit, its labels, the test environment, exit 77 = skipped.
function(_scalebench_test_properties test_name timeout labels)
  set_tests_properties(${test_name} PROPERTIES TIMEOUT ${timeout} LABELS "${labels}"
    ENVIRONMENT "${SCALEBENCH_TEST_ENV}" ENVIRONMENT_MODIFICATION "SCALEBENCH_PROFILE=unset:"
    SKIP_RETURN_CODE 77)
endfunction()

# A gpu test's GPUS: required, a whole number; none for other kinds.
function(_scalebench_test_gpus name kind gpus)
  if(kind STREQUAL "gpu" AND NOT gpus MATCHES "^[0-9]+$")
    message(FATAL_ERROR "test ${name}: KIND gpu needs GPUS g (the GPUs it uses, 0 for none)")
  endif()
  if(NOT kind STREQUAL "gpu" AND NOT gpus STREQUAL "")
    message(FATAL_ERROR "test ${name}: GPUS is for KIND gpu")
  endif()
endfunction()

function(scalebench_add_test)
  cmake_parse_arguments(T "" "NAME;KIND;RANKS;GPUS;TIMEOUT" "SOURCES;LABELS;WITHOUT_CUDA_CASES" ${ARGN})
  _scalebench_test_arguments(${T_NAME} "${T_KIND}" "unit;mpi;cli;gpu" "${T_LABELS}" "${T_UNPARSED_ARGUMENTS}"
                             "${T_TIMEOUT}" 120)
  if(T_KIND STREQUAL "mpi" AND NOT T_RANKS)
    message(FATAL_ERROR "test ${T_NAME}: KIND mpi needs RANKS")
  endif()
  if(T_RANKS AND T_KIND MATCHES "^(unit|cli)$")
    message(FATAL_ERROR "test ${T_NAME}: KIND ${T_KIND} runs in one process; MPI tests are KIND mpi or gpu")
  endif()
  _scalebench_test_gpus(${T_NAME} "${T_KIND}" "${T_GPUS}")
  if(T_WITHOUT_CUDA_CASES AND T_RANKS)
    message(FATAL_ERROR "test ${T_NAME}: WITHOUT_CUDA_CASES is for a test of one process")
  endif()
  set(exe test_${T_NAME})
  if(NOT TARGET ${exe})
    # The CLI tests' runner (cli/cli_runner.cpp) is compiled once, into scalebench_cli_runner.
    set(runner ${T_SOURCES})
    list(FILTER runner INCLUDE REGEX "(^|/)cli/cli_runner\\.cpp$")
    list(FILTER T_SOURCES EXCLUDE REGEX "(^|/)cli/cli_runner\\.cpp$")
    add_executable(${exe} ${T_SOURCES})
    if(runner)
      target_link_libraries(${exe} PRIVATE scalebench_cli_runner)
    endif()
    target_link_libraries(${exe} PRIVATE scalebench_core scalebench_gpu scalebench_warnings)
    if(T_RANKS)
      target_link_libraries(${exe} PRIVATE scalebench_gtest_main_mpi)
    else()
      target_link_libraries(${exe} PRIVATE scalebench_gtest_main_serial)
    endif()
    add_dependencies(${exe} scalebench)
    target_compile_options(${exe} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-O1>)
    set(cuda_sources ${T_SOURCES})
    list(FILTER cuda_sources INCLUDE REGEX "\\.cu$")
    if(NOT cuda_sources)
      target_precompile_headers(${exe} REUSE_FROM scalebench_test_pch)
    endif()
  endif()
  # A GPU test runs on the GPUs CTest gave it, where it gave any (tests/support/visible-gpus).
  set(launcher "")
  if(T_GPUS GREATER 0)
    set(launcher ${PROJECT_SOURCE_DIR}/tests/support/visible-gpus)
  endif()
  if(T_RANKS)
    set(test_name ${T_NAME}_np${T_RANKS})
    add_test(NAME ${test_name}
      COMMAND ${launcher} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${T_RANKS} --oversubscribe ${MPIEXEC_PREFLAGS}
              $<TARGET_FILE:${exe}> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(${test_name} PROPERTIES PROCESSORS ${T_RANKS})
  elseif(T_WITHOUT_CUDA_CASES)
    set(test_name ${T_NAME})
    string(JOIN ":" cases ${T_WITHOUT_CUDA_CASES})
    add_test(NAME ${test_name} COMMAND ${launcher} $<TARGET_FILE:${exe}> --gtest_filter=-${cases})
    add_test(NAME ${test_name}_without_cuda COMMAND ${launcher} $<TARGET_FILE:${exe}> --gtest_filter=${cases})
    _scalebench_test_properties(${test_name}_without_cuda ${timeout} "${labels};without_cuda")
    # Test n's executable is test_<n>: building test_<n>_without_cuda builds it too.
    if(NOT TARGET ${exe}_without_cuda)
      add_custom_target(${exe}_without_cuda DEPENDS ${exe})
    endif()
  else()
    set(test_name ${T_NAME})
    add_test(NAME ${test_name} COMMAND ${launcher} $<TARGET_FILE:${exe}>)
  endif()
  _scalebench_test_properties(${test_name} ${timeout} "${labels}")
  if(T_GPUS GREATER 0)
    set_tests_properties(${test_name} PROPERTIES RESOURCE_GROUPS "${T_GPUS},gpus:1")
  endif()
endfunction()

function(scalebench_add_script_test)
  cmake_parse_arguments(T "SERIAL" "NAME;KIND;TIMEOUT" "COMMAND;LABELS" ${ARGN})
  _scalebench_test_arguments(${T_NAME} "${T_KIND}" "cli;slurm;cluster" "${T_LABELS}" "${T_UNPARSED_ARGUMENTS}"
                             "${T_TIMEOUT}" 300)
  add_test(NAME ${T_NAME} COMMAND ${T_COMMAND})
  _scalebench_test_properties(${T_NAME} ${timeout} "${labels}")
  if(T_SERIAL)
    set_tests_properties(${T_NAME} PROPERTIES RUN_SERIAL TRUE)
  endif()
endfunction()

# Every test of `dir` has exactly one kind label: a test added with add_test()
# directly, without a kind, fails the configuration. Call after all tests are declared.
function(scalebench_check_test_kinds dir)
  get_property(tests DIRECTORY ${dir} PROPERTY TESTS)
  foreach(t ${tests})
    get_test_property(${t} LABELS labels)
    set(kinds "")
    foreach(label ${labels})
      if(label IN_LIST SCALEBENCH_TEST_KINDS)
        list(APPEND kinds ${label})
      endif()
    endforeach()
    list(LENGTH kinds count)
    if(NOT count EQUAL 1)
      message(FATAL_ERROR "test ${t} has kinds '${kinds}': every test has exactly one of ${SCALEBENCH_TEST_KINDS}; "
                          "declare it with scalebench_add_test or scalebench_add_script_test (cmake/ScalebenchTest.cmake)")
    endif()
  endforeach()
endfunction()
