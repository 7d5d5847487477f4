#pragma once
// Size arithmetic that never overflows silently. Every product of sizes (elements, bytes, memory
// estimates) goes through these; a size that does not fit is a UsageError with exact figures.
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>

namespace scalebench {

inline constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
inline constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();

// a*b and a+b, or nullopt when the result does not fit in int64.
std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b);
std::optional<std::int64_t> checked_add(std::int64_t a, std::int64_t b);

// The exact decimal product of non-negative factors (any size: "9999999999800000000001").
std::string exact_product(std::initializer_list<std::int64_t> factors);

// The product of `factors` if it is <= limit; else UsageError
// "<what> = f1 x f2 = <exact> exceeds <limit_name> (<limit>)<advice>".
std::int64_t product_within(const std::string& what, std::initializer_list<std::int64_t> factors, std::int64_t limit,
                            const std::string& limit_name, const std::string& advice = "");
// The sum of non-negative `terms` if it is <= limit; else UsageError with the exact sum.
std::int64_t sum_within(const std::string& what, std::initializer_list<std::int64_t> terms, std::int64_t limit,
                        const std::string& limit_name, const std::string& advice = "");
// `value` itself must be <= limit: UsageError "<what> = <value> exceeds <limit_name> (<limit>)<advice>".
void value_within(const std::string& what, std::int64_t value, std::int64_t limit, const std::string& limit_name,
                  const std::string& advice = "");

// The most repeats one run takes, warm-up included: reps + warmup then fits an int everywhere
// (the repeat loop, the record, a prediction's job) and a product with it stays far from 2^63.
inline constexpr std::int64_t kMaxRepeats = std::int64_t{1} << 30;
// --reps in [1, kMaxRepeats], --warmup in [0, kMaxRepeats] and their sum at most kMaxRepeats;
// UsageError naming the option(s) otherwise.
void check_repeats(std::int64_t reps, std::int64_t warmup);

// `value` when it is finite; else UsageError "<what> is not a finite number<advice>". For
// figures computed from options in doubles (times, costs, energies) before they are printed.
double finite_within(const std::string& what, double value, const std::string& advice);

}  // namespace scalebench
