# One helper declares every test: its ranks, GPU need, labels and timeout.
#   scalebench_add_test(NAME n SOURCES f.cpp... [RANKS r] [MPI] [GPU] [LABELS l...] [TIMEOUT s])
# RANKS (or MPI) makes it an MPI test run as `mpiexec -n r`; GPU adds label gpu (the test skips
# itself with a reason when no GPU is visible). A test executable counts as skipped (exit 77) only
# when all its tests skipped and none failed.
find_package(GTest REQUIRED)

set(SCALEBENCH_TEST_ENV
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
  OMPI_MCA_hwloc_base_binding_policy=none
  SCALEBENCH_BINARY=$<TARGET_FILE:scalebench>
  SCALEBENCH_SOURCE_DIR=${PROJECT_SOURCE_DIR}
  SCALEBENCH_MPIEXEC=${MPIEXEC_EXECUTABLE})

add_library(scalebench_gtest_main_serial STATIC ${PROJECT_SOURCE_DIR}/tests/support/gtest_main_serial.cpp)
target_link_libraries(scalebench_gtest_main_serial PUBLIC GTest::gtest scalebench_core)
add_library(scalebench_gtest_main_mpi STATIC ${PROJECT_SOURCE_DIR}/tests/support/gtest_main_mpi.cpp)
target_link_libraries(scalebench_gtest_main_mpi PUBLIC GTest::gtest scalebench_core)
foreach(lib scalebench_gtest_main_serial scalebench_gtest_main_mpi)
  target_include_directories(${lib} PUBLIC ${PROJECT_SOURCE_DIR}/tests/support ${PROJECT_SOURCE_DIR}/src)
endforeach()

function(scalebench_add_test)
  cmake_parse_arguments(T "MPI;GPU" "NAME;RANKS;TIMEOUT" "SOURCES;LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  if(T_RANKS)
    set(T_MPI ON)
  elseif(T_MPI)
    set(T_RANKS 1)
  endif()
  set(exe test_${T_NAME})
  if(NOT TARGET ${exe})
    add_executable(${exe} ${T_SOURCES})
    target_link_libraries(${exe} PRIVATE scalebench_core scalebench_gpu scalebench_warnings)
    if(T_MPI)
      target_link_libraries(${exe} PRIVATE scalebench_gtest_main_mpi)
    else()
      target_link_libraries(${exe} PRIVATE scalebench_gtest_main_serial)
    endif()
    add_dependencies(${exe} scalebench)
  endif()
  set(labels ${T_LABELS})
  if(T_GPU)
    list(APPEND labels gpu)
  endif()
  if(T_MPI)
    set(test_name ${T_NAME}_np${T_RANKS})
    add_test(NAME ${test_name}
      COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${T_RANKS} --oversubscribe ${MPIEXEC_PREFLAGS}
              $<TARGET_FILE:${exe}> ${MPIEXEC_POSTFLAGS})
    list(APPEND labels mpi)
    set_tests_properties(${test_name} PROPERTIES PROCESSORS ${T_RANKS})
  else()
    set(test_name ${T_NAME})
    add_test(NAME ${test_name} COMMAND $<TARGET_FILE:${exe}>)
    list(APPEND labels unit)
  endif()
  set_tests_properties(${test_name} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "${labels}"
    ENVIRONMENT "${SCALEBENCH_TEST_ENV}" SKIP_RETURN_CODE 77)
endfunction()
