// Size arithmetic: overflow is detected, and the messages carry exact figures.
#include <gtest/gtest.h>

#include <cmath>

#include "scalebench/base/checked_size.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/workloads/gemm/gemm_config.hpp"

using namespace scalebench;

TEST(CheckedSize, DetectsOverflowOfProductsAndSums) {
  EXPECT_EQ(checked_mul(3037000499, 3037000499).value(), 9223372030926249001LL);
  EXPECT_FALSE(checked_mul(3037000500, 3037000500).has_value());
  EXPECT_FALSE(checked_add(kInt64Max, 1).has_value());
}

TEST(CheckedSize, ExactProductBeyondEveryBuiltinType) {
  EXPECT_EQ(exact_product({99999999999, 99999999999, 8}), "79999999998400000000008");
  EXPECT_EQ(exact_product({2147483648, 2147483648, 8}), "36893488147419103232");
  EXPECT_EQ(exact_product({}), "1");
}

TEST(CheckedSize, MessagesGiveFactorsProductAndLimit) {
  try {
    product_within("bytes of A", {2147483648, 2147483648, 8}, kInt64Max, "a 64-bit count");
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "bytes of A = 2147483648 x 2147483648 x 8 = 36893488147419103232 exceeds a 64-bit count "
                           "(9223372036854775807)");
  }
  try {
    sum_within("total", {kInt64Max, kInt64Max}, kInt64Max, "a 64-bit count");
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("= 18446744073709551614 exceeds"), std::string::npos) << e.what();
  }
}

TEST(CheckedSize, GemmMemoryEstimateIsTheTrueFigureOrAnError) {
  GemmConfig cfg;
  cfg.shape = {1000000, 1000000, 1000000};
  // A + B + C + the peer's C_i, 8 bytes each, on rank 0 holding every row.
  EXPECT_EQ(host_bytes_per_rank(cfg, 1000000, true), 32000000000000LL);
  cfg.shape = {2147483648, 2147483648, 2147483648};
  EXPECT_THROW(host_bytes_per_rank(cfg, 1, false), UsageError);
  EXPECT_THROW(validate(cfg), UsageError);
  cfg.shape = {3037000500, 1, 3037000500};
  cfg.backend = GemmBackendKind::openblas;
  EXPECT_THROW(validate(cfg), UsageError);
}

TEST(CheckedSize, RepeatsAndWarmUpTogetherFitOneRun) {
  EXPECT_NO_THROW(check_repeats(1, 0));
  EXPECT_NO_THROW(check_repeats(kMaxRepeats - 1, 1));
  EXPECT_NO_THROW(check_repeats(kMaxRepeats, 0));
  // Each within its range, the sum beyond: the message names both and gives the exact sum.
  try {
    check_repeats(kMaxRepeats, kMaxRepeats);
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--reps + --warmup = 1073741824 + 1073741824 = 2147483648 exceeds the most repeats of one "
                           "run (1073741824); give fewer --reps or --warmup");
  }
  EXPECT_THROW(check_repeats(0, 0), UsageError);
  EXPECT_THROW(check_repeats(1, -1), UsageError);
  EXPECT_THROW(check_repeats(kInt32Max, 1), UsageError);  // once wrapped to a negative int
  EXPECT_THROW(check_repeats(kInt64Max, kInt64Max), UsageError);
}

TEST(CheckedSize, FiniteFiguresPassOthersAreRefusedByName) {
  EXPECT_EQ(finite_within("cost", 1e300, ""), 1e300);
  try {
    finite_within("cost.cost", 1e300 * 1e300, "; use a smaller --price-per-hour");
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "cost.cost is not a finite number (inf); use a smaller --price-per-hour");
  }
  EXPECT_THROW(finite_within("x", std::nan(""), ""), UsageError);
}
