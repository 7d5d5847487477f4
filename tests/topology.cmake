# Topology discovery and rank placement: plans computed against saved hwloc XML exports of real
# machines (tests/data), the launcher options, the topology subcommand, and binding for real.
set(SCALEBENCH_TOPOLOGY_DATA_DIR ${CMAKE_CURRENT_SOURCE_DIR}/data)

scalebench_add_test(NAME topology KIND unit
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_topology_xml.cpp
          ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_topology_live.cpp
          ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_topology_command.cpp
  LABELS topology)
target_compile_definitions(test_topology PRIVATE SCALEBENCH_TEST_DATA_DIR="${SCALEBENCH_TOPOLOGY_DATA_DIR}")

scalebench_add_test(NAME placement KIND unit
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_placement_plans.cpp
          ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_placement_rules.cpp
          ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_placement_launch.cpp
  LABELS topology)
target_compile_definitions(test_placement PRIVATE SCALEBENCH_TEST_DATA_DIR="${SCALEBENCH_TOPOLOGY_DATA_DIR}")

scalebench_add_test(NAME binding KIND mpi
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/mpi/test_binding.cpp
  RANKS 2 LABELS topology)
