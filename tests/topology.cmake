# Topology discovery and rank placement: plans computed against saved hwloc XML exports of real
# machines (tests/data), the launcher options, the topology subcommand, and binding for real.
set(SCALEBENCH_TOPOLOGY_DATA_DIR ${CMAKE_CURRENT_SOURCE_DIR}/data)

# A unit test that reads the saved exports (SCALEBENCH_TEST_DATA_DIR).
function(scalebench_add_topology_data_test name)
  scalebench_add_test(NAME ${name} KIND unit SOURCES ${ARGN} LABELS topology)
  target_compile_definitions(test_${name} PRIVATE SCALEBENCH_TEST_DATA_DIR="${SCALEBENCH_TOPOLOGY_DATA_DIR}")
endfunction()

scalebench_add_topology_data_test(topology
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_topology_xml.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_topology_live.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_topology_command.cpp)
scalebench_add_topology_data_test(placement
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_placement_plans.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_placement_rules.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_placement_launch.cpp)

scalebench_add_test(NAME binding KIND mpi
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/mpi/test_binding.cpp
  RANKS 2 LABELS topology)
