# Unity builds of the libraries: each layer's sources are compiled SCALEBENCH_UNITY_BATCH at a time
# as one translation unit. Most of a source's compile time is the code generated for the
# header-only libraries it uses (nlohmann-json, fmt, CLI11): one batch generates it once where
# separate sources each generate it again, so a build from scratch takes about half the time.
# The sources stay separate files with their own includes (clang-tidy and a
# -DSCALEBENCH_UNITY=OFF build check each alone); a name in an anonymous namespace must be unique
# within its layer, since its neighbours in a batch see it.
option(SCALEBENCH_UNITY "Compile each library's sources in batches (unity build)" ON)
set(SCALEBENCH_UNITY_BATCH 8 CACHE STRING "Sources per unity batch")

function(scalebench_unity target)
  if(SCALEBENCH_UNITY)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${SCALEBENCH_UNITY_BATCH})
  endif()
endfunction()
