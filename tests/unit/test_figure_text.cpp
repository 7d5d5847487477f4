// The figures the drivers' tables print (report/figure_text.hpp): the usual decimals where they
// show a figure in a few digits, four significant digits at the ends of the record rule's ranges
// and beyond, never inf or nan; a ratio only where it is a finite number.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "drivers/report/figure_text.hpp"

using scalebench::report::finite_ratio;
using scalebench::report::fixed_text;
using scalebench::report::signed_percent;

TEST(FigureText, UsualFiguresKeepTheirDecimals) {
  EXPECT_EQ(fixed_text(0.0123, 4), "0.0123");
  EXPECT_EQ(fixed_text(1.5, 2), "1.50");
  EXPECT_EQ(fixed_text(41.7, 1), "41.7");
  EXPECT_EQ(fixed_text(0, 4), "0.0000");
  EXPECT_EQ(fixed_text(999999.5, 0), "1000000");  // below the limit, rounded as before
  EXPECT_EQ(signed_percent(0.08), "+8%");
  EXPECT_EQ(signed_percent(-0.23), "-23%");
}

TEST(FigureText, ExtremesAreFourSignificantDigits) {
  EXPECT_EQ(fixed_text(5e-324, 4), "4.941e-324");
  EXPECT_EQ(fixed_text(1e-12, 4), "1e-12");
  EXPECT_EQ(fixed_text(3.2e9, 4), "3.2e+09");
  EXPECT_EQ(fixed_text(1e308, 2), "1e+308");
  EXPECT_EQ(fixed_text(-1e308, 2), "-1e+308");
  EXPECT_EQ(fixed_text(0.00005, 4), "5e-05");  // not 0.0001 nor 0.0000
  EXPECT_EQ(signed_percent(3.2e21), "+3.2e+23%");
  for (const double v : {5e-324, 1e-300, 1e-12, 3.2e9, 1e18, 1e300, std::numeric_limits<double>::max()}) {
    for (const int decimals : {0, 1, 2, 3, 4}) {
      const std::string s = fixed_text(v, decimals);
      EXPECT_LE(s.size(), 12u) << v << " " << s;
    }
  }
}

TEST(FigureText, NotFiniteIsADash) {
  EXPECT_EQ(fixed_text(std::numeric_limits<double>::infinity(), 2), "-");
  EXPECT_EQ(fixed_text(std::nan(""), 2), "-");
  EXPECT_EQ(signed_percent(std::numeric_limits<double>::infinity()), "-");
}

TEST(FigureText, ARatioIsGivenOnlyWhereItIsFinite) {
  EXPECT_DOUBLE_EQ(*finite_ratio(3.0, 2.0), 1.5);
  EXPECT_DOUBLE_EQ(*finite_ratio(0.0, 2.0), 0.0);
  EXPECT_NEAR(*finite_ratio(3.2e9, 1e-12), 3.2e21, 1e7);  // the ends of the measured times
  EXPECT_FALSE(finite_ratio(1.0, 5e-324));                // beyond a double: inf
  EXPECT_FALSE(finite_ratio(1e308, 0.5));
  EXPECT_FALSE(finite_ratio(1.0, 0.0));
  EXPECT_FALSE(finite_ratio(1.0, -2.0));
  EXPECT_FALSE(finite_ratio(std::nan(""), 1.0));
}
