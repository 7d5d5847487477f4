#include <gtest/gtest.h>

#include "scalebench/error.hpp"
#include "scalebench/parse.hpp"

using namespace scalebench;

TEST(ParseCount, AcceptsWholeNumbersInCommonSpellings) {
  EXPECT_EQ(parse_positive_count("--n", "4096"), 4096);
  EXPECT_EQ(parse_positive_count("--samples", "1e9"), 1000000000);
  EXPECT_EQ(parse_positive_count("--samples", "1_000_000"), 1000000);
}

TEST(ParseCount, RejectsWithAMessageNamingTheOption) {
  for (const char* bad : {"0", "-5", "abc", "", "1.5", "12x", "1e30"}) {
    try {
      parse_positive_count("--n", bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--n"), std::string::npos) << e.what();
      EXPECT_EQ(e.code(), ExitCode::usage);
    }
  }
}

TEST(ParseReal, RejectsNonNumbers) {
  EXPECT_DOUBLE_EQ(parse_real("--sigma", "0.2"), 0.2);
  EXPECT_THROW(parse_real("--sigma", "x"), UsageError);
  EXPECT_THROW(parse_real("--sigma", "inf"), UsageError);
}
