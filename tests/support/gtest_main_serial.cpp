// gtest main for serial tests. Exit 77 (CTest's SKIP_RETURN_CODE) only when every test skipped
// itself and none failed, so a skip never hides a failure.
#include <gtest/gtest.h>

#include "scalebench/gpu/device.hpp"

int main(int argc, char** argv) {
  scalebench::register_builtin_devices();
  testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  const auto* ut = testing::UnitTest::GetInstance();
  if (rc == 0 && ut->test_to_run_count() > 0 && ut->skipped_test_count() == ut->test_to_run_count()) return 77;
  return rc;
}
