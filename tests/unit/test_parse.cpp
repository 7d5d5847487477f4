#include <gtest/gtest.h>

#include "scalebench/base/error.hpp"
#include "scalebench/base/parse.hpp"

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

TEST(ParseCount, RejectsHexBlanksAndNonFiniteSpellings) {
  for (const char* bad : {"0x10", " 12", "12 ", "inf", "nan", "1e99", "9223372036854775808"}) {
    EXPECT_THROW(parse_positive_count("--n", bad), UsageError) << bad;
  }
  EXPECT_EQ(parse_positive_count("--n", "9223372036854775807"), 9223372036854775807LL);
}

TEST(ParseInteger, TakesDecimalsInTheRangeOnly) {
  EXPECT_EQ(parse_integer("--inject-error-rank", "-1", -1, 5), -1);
  EXPECT_EQ(parse_integer("--reps", "010", 1, 100), 10);  // decimal, not octal
  for (const char* bad : {"6", "-2", "0x3", "1.0", "1e1", "", "3abc", "99999999999999999999"}) {
    try {
      parse_integer("--reps", bad, -1, 5);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--reps must be a whole number in [-1, 5]"), std::string::npos) << e.what();
    }
  }
}

TEST(ParseUnsigned, MinusOneIsAnErrorNotTwoToTheSixtyFourMinusOne) {
  EXPECT_EQ(parse_unsigned("--seed", "18446744073709551615"), 18446744073709551615ULL);
  for (const char* bad : {"-1", "18446744073709551616", "+1", "0x10", "", "1e3"}) {
    EXPECT_THROW(parse_unsigned("--seed", bad), UsageError) << bad;
  }
}

TEST(ParseReal, RejectsNanTrailingCharactersAndHex) {
  for (const char* bad : {"nan", "-inf", "0.05x", "0x1p3", " 1", "1e400"}) {
    EXPECT_THROW(parse_real("--rate", bad), UsageError) << bad;
  }
  EXPECT_DOUBLE_EQ(parse_real("--rate", "-5e-2"), -0.05);
}

TEST(ParseSeparators, AnUnderscoreOnlyBetweenDigitsAndNoLeadingPlus) {
  EXPECT_EQ(parse_positive_count("--n", "4_096"), 4096);
  EXPECT_EQ(parse_positive_count("--samples", "1_0e1_0"), 100000000000);
  EXPECT_EQ(parse_positive_count("--samples", "1e+9"), 1000000000);  // the exponent's sign stays
  EXPECT_EQ(parse_integer("--reps", "1_0", 1, 100), 10);
  EXPECT_EQ(parse_unsigned("--seed", "1_2"), 12U);
  for (const char* bad : {"+64", "_64", "64_", "1__0", "1_e9", "1e_9", "1._5", "_", "-_1", "+_1"}) {
    EXPECT_THROW(parse_positive_count("--n", bad), UsageError) << bad;
    EXPECT_THROW(parse_integer("--reps", bad, -100, 100), UsageError) << bad;
    EXPECT_THROW(parse_unsigned("--seed", bad), UsageError) << bad;
  }
  EXPECT_THROW(parse_real("--spot", "+100"), UsageError);
  EXPECT_DOUBLE_EQ(parse_real("--spot", "1e+2"), 100.0);
}
