#pragma once
// The GPU tests skip, saying why, where no GPU is visible.
#include <gtest/gtest.h>

#include "scalebench/gpu/gpu.hpp"

#define SKIP_WITHOUT_A_GPU()                                                                                  \
  do {                                                                                                        \
    if (scalebench::visible_gpu_count() == 0) GTEST_SKIP() << "no GPU: " << scalebench::gpu_absence_reason(); \
  } while (0)
