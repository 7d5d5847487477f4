#include "scalebench/base/checked_size.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "scalebench/base/error.hpp"

namespace scalebench {
namespace {
// 128-bit unsigned (a GCC/Clang extension): exact figures for messages only.
__extension__ using U128 = unsigned __int128;
}  // namespace

std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<std::int64_t> checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::string exact_product(std::initializer_list<std::int64_t> factors) {
  // Little-endian base-10^9 digits: products of a few 63-bit factors exceed every builtin type.
  constexpr std::uint64_t kBase = 1'000'000'000;
  std::vector<std::uint64_t> digits{1};
  for (const std::int64_t f : factors) {
    const auto m = static_cast<U128>(std::max<std::int64_t>(f, 0));
    U128 carry = 0;
    for (auto& d : digits) {
      const U128 v = m * d + carry;
      d = static_cast<std::uint64_t>(v % kBase);
      carry = v / kBase;
    }
    while (carry > 0) {
      digits.push_back(static_cast<std::uint64_t>(carry % kBase));
      carry /= kBase;
    }
  }
  while (digits.size() > 1 && digits.back() == 0) digits.pop_back();
  std::string out = std::to_string(digits.back());
  for (auto it = digits.rbegin() + 1; it != digits.rend(); ++it) out += fmt::format("{:09}", *it);
  return out;
}

std::int64_t product_within(const std::string& what, std::initializer_list<std::int64_t> factors, std::int64_t limit,
                            const std::string& limit_name, const std::string& advice) {
  std::optional<std::int64_t> p = 1;
  std::string text;
  for (const std::int64_t f : factors) {
    if (p) p = checked_mul(*p, f);
    text += fmt::format("{}{}", text.empty() ? "" : " x ", f);
  }
  if (p && *p <= limit) return *p;
  throw UsageError(
      fmt::format("{} = {} = {} exceeds {} ({}){}", what, text, exact_product(factors), limit_name, limit, advice));
}

std::int64_t sum_within(const std::string& what, std::initializer_list<std::int64_t> terms, std::int64_t limit,
                        const std::string& limit_name, const std::string& advice) {
  std::optional<std::int64_t> sum = 0;
  U128 exact = 0;
  std::string text;
  for (const std::int64_t t : terms) {
    if (sum) sum = checked_add(*sum, t);
    exact += static_cast<U128>(std::max<std::int64_t>(t, 0));
    text += fmt::format("{}{}", text.empty() ? "" : " + ", t);
  }
  if (sum && *sum <= limit) return *sum;
  std::string digits;
  for (; exact > 0 || digits.empty(); exact /= 10) digits.insert(digits.begin(), static_cast<char>('0' + exact % 10));
  throw UsageError(fmt::format("{} = {} = {} exceeds {} ({}){}", what, text, digits, limit_name, limit, advice));
}

void value_within(const std::string& what, std::int64_t value, std::int64_t limit, const std::string& limit_name,
                  const std::string& advice) {
  if (value <= limit) return;
  throw UsageError(fmt::format("{} = {} exceeds {} ({}){}", what, value, limit_name, limit, advice));
}

void check_repeats(std::int64_t reps, std::int64_t warmup) {
  if (reps < 1 || reps > kMaxRepeats) {
    throw UsageError(fmt::format("--reps must be a whole number in [1, {}] (got {})", kMaxRepeats, reps));
  }
  if (warmup < 0 || warmup > kMaxRepeats) {
    throw UsageError(fmt::format("--warmup must be a whole number in [0, {}] (got {})", kMaxRepeats, warmup));
  }
  sum_within("--reps + --warmup", {reps, warmup}, kMaxRepeats, "the most repeats of one run",
             "; give fewer --reps or --warmup");
}

double finite_within(const std::string& what, double value, const std::string& advice) {
  if (std::isfinite(value)) return value;
  throw UsageError(fmt::format("{} is not a finite number ({}){}", what, value, advice));
}

}  // namespace scalebench
