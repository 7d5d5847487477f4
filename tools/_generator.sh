# shellcheck shell=bash
# Sourced by tools/build and tools/check: the CMake generator for a build folder, in the array
# `gen`. A new folder is made for Ninja where it is installed (tools/setup installs it for
# tools/check; CMAKE_GENERATOR chooses otherwise): on two cores it builds the test programs, many
# small targets, in about two thirds of make's time. A folder keeps the generator it was made with.
# shellcheck disable=SC2034 # gen is read by the script that sources this
generator_for() {
  gen=()
  if [ ! -f "$1/CMakeCache.txt" ] && [ -z "${CMAKE_GENERATOR:-}" ] && command -v ninja >/dev/null 2>&1; then
    gen=(-G Ninja)
  fi
}
