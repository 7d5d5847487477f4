# SCALEBENCH_CUDA=AUTO|ON|OFF decides whether cuda/ is built (and registered as the "cuda" device) or not.
set(SCALEBENCH_HAVE_CUDA OFF)
if(NOT SCALEBENCH_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    find_package(CUDAToolkit)
  endif()
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND)
    find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/lib/x86_64-linux-gnu)
    find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/include)
    if(NCCL_LIBRARY AND NCCL_INCLUDE_DIR)
      set(SCALEBENCH_HAVE_CUDA ON)
    elseif(SCALEBENCH_CUDA STREQUAL "ON")
      message(FATAL_ERROR "SCALEBENCH_CUDA=ON but NCCL was not found next to the CUDA toolkit")
    endif()
  elseif(SCALEBENCH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "SCALEBENCH_CUDA=ON but no CUDA toolkit (nvcc) was found")
  endif()
endif()
if(SCALEBENCH_HAVE_CUDA)
  message(STATUS "scalebench: CUDA backends ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
  add_library(scalebench::nccl INTERFACE IMPORTED)
  target_link_libraries(scalebench::nccl INTERFACE ${NCCL_LIBRARY})
  target_include_directories(scalebench::nccl INTERFACE ${NCCL_INCLUDE_DIR})
else()
  message(STATUS "scalebench: CUDA backends OFF (no usable CUDA toolkit, or SCALEBENCH_CUDA=OFF): building CPU-only; "
                 "GPU subcommands will report 'built without CUDA'")
endif()

# A workload's own CUDA library (src/workloads/<name>/cuda/): every .cu and .cpp of the calling
# folder, over cuda/'s owners, checks and primitives and the layers below it, compiled as cuda/ is.
# It sees the workloads layer's headers (its workload's configuration, gemm/gemm_config.hpp) but
# links nothing of it: the workloads layer links it privately (src/CMakeLists.txt).
#   scalebench_workload_cuda(<target> LINKS <the workload's own libraries>)
function(scalebench_workload_cuda target)
  cmake_parse_arguments(ARG "" "" "LINKS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cu ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  add_library(${target} STATIC ${sources})
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/cuda
    ${PROJECT_SOURCE_DIR}/src/workloads
    ${CMAKE_BINARY_DIR}/layers/workloads)
  target_link_libraries(${target}
    PRIVATE scalebench_warnings scalebench_cuda scalebench_gpu scalebench_problem fmt::fmt CUDA::cudart ${ARG_LINKS})
  set_target_properties(${target} PROPERTIES CUDA_SEPARABLE_COMPILATION OFF POSITION_INDEPENDENT_CODE ON)
  scalebench_unity(${target})
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -lineinfo>)
endfunction()
