# build_info.cpp is regenerated at every build so the git hash in records is never stale.
set(SCALEBENCH_BUILD_INFO_CPP ${CMAKE_BINARY_DIR}/generated/build_info.cpp)
add_custom_target(scalebench_build_info
  COMMAND ${CMAKE_COMMAND} -DSRC=${CMAKE_SOURCE_DIR} -DOUT=${SCALEBENCH_BUILD_INFO_CPP}
          -DVERSION=${PROJECT_VERSION} -DCUDA=${SCALEBENCH_HAVE_CUDA}
          -DCOMPILER=${CMAKE_CXX_COMPILER_ID}-${CMAKE_CXX_COMPILER_VERSION}
          -DBUILD_TYPE=${CMAKE_BUILD_TYPE}
          -P ${CMAKE_SOURCE_DIR}/cmake/write_build_info.cmake
  BYPRODUCTS ${SCALEBENCH_BUILD_INFO_CPP}
  COMMENT "scalebench build info")
