# ScaLAPACK, the peer `scalebench gemm --peer scalapack` times (include/scalebench/peers/scalapack.hpp):
# Debian's libscalapack-openmpi-dev (tools/setup installs it), found through pkg-config
# (scalapack-openmpi, else scalapack) or as a library. SCALEBENCH_SCALAPACK: AUTO (use it if
# found), ON (required) or OFF (never). Without it the build links a stub, and `--peer scalapack`
# says the build has no ScaLAPACK (exit 3).
set(SCALEBENCH_SCALAPACK "AUTO" CACHE STRING "Link ScaLAPACK for --peer scalapack: AUTO (if found), ON (required) or OFF")
set_property(CACHE SCALEBENCH_SCALAPACK PROPERTY STRINGS AUTO ON OFF)
set(SCALEBENCH_HAVE_SCALAPACK OFF)
if(NOT SCALEBENCH_SCALAPACK STREQUAL "OFF")
  pkg_check_modules(SCALAPACK QUIET IMPORTED_TARGET scalapack-openmpi)
  if(NOT SCALAPACK_FOUND)
    pkg_check_modules(SCALAPACK QUIET IMPORTED_TARGET scalapack)
  endif()
  if(SCALAPACK_FOUND)
    add_library(scalebench::scalapack INTERFACE IMPORTED)
    target_link_libraries(scalebench::scalapack INTERFACE PkgConfig::SCALAPACK)
    set(SCALEBENCH_HAVE_SCALAPACK ON)
  else()
    find_library(SCALAPACK_LIBRARY NAMES scalapack-openmpi scalapack)
    if(SCALAPACK_LIBRARY)
      add_library(scalebench::scalapack INTERFACE IMPORTED)
      target_link_libraries(scalebench::scalapack INTERFACE ${SCALAPACK_LIBRARY})
      set(SCALEBENCH_HAVE_SCALAPACK ON)
    endif()
  endif()
  if(SCALEBENCH_SCALAPACK STREQUAL "ON" AND NOT SCALEBENCH_HAVE_SCALAPACK)
    message(FATAL_ERROR "SCALEBENCH_SCALAPACK=ON but ScaLAPACK was not found: install libscalapack-openmpi-dev "
                        "(tools/setup does) or configure with -DSCALEBENCH_SCALAPACK=AUTO")
  endif()
endif()
message(STATUS "ScaLAPACK peer (--peer scalapack): ${SCALEBENCH_HAVE_SCALAPACK}")
