# Every dependency is a Debian package (tools/setup installs them); none is downloaded.
find_package(MPI REQUIRED COMPONENTS C)
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json 3.10 CONFIG REQUIRED)
find_package(yaml-cpp CONFIG REQUIRED)
find_package(fmt CONFIG REQUIRED)

# OpenBLAS as OpenBLAS (not "some BLAS"): its config and core type are recorded in every run.
pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc)
find_library(NUMA_LIBRARY numa REQUIRED)
find_path(NUMA_INCLUDE_DIR numa.h REQUIRED)
add_library(scalebench::numa INTERFACE IMPORTED)
target_link_libraries(scalebench::numa INTERFACE ${NUMA_LIBRARY})
target_include_directories(scalebench::numa INTERFACE ${NUMA_INCLUDE_DIR})

# Random123 is header-only; SCALEBENCH_RANDOM123_DIR may point at a folder holding Random123/.
find_path(RANDOM123_INCLUDE_DIR Random123/philox.h
  HINTS ${SCALEBENCH_RANDOM123_DIR} $ENV{SCALEBENCH_RANDOM123_DIR} ${CMAKE_SOURCE_DIR}/.deps/include)
if(NOT RANDOM123_INCLUDE_DIR)
  message(FATAL_ERROR "Random123 headers not found: install librandom123-dev (tools/setup does) "
                      "or set SCALEBENCH_RANDOM123_DIR to a folder holding Random123/philox.h")
endif()
add_library(scalebench::random123 INTERFACE IMPORTED)
target_include_directories(scalebench::random123 SYSTEM INTERFACE ${RANDOM123_INCLUDE_DIR})
