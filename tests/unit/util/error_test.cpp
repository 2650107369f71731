// PTXBENCH_TRY and PTXBENCH_TRY_ASSIGN return the error of a failed Expected or Status and fall
// through on success; the ErrorKind table reads persisted values without indexing by them.
#include "util/error.hpp"

#include <gtest/gtest.h>
#include <string>

namespace ptxbench::util {
namespace {

Expected<int> parse_digit(char c) {
  if (c < '0' || c > '9')
    return Error{ErrorKind::invalid_input, std::string("not a digit: ") + c};
  return c - '0';
}

Expected<int> sum_of_digits(std::string_view text, int* steps) {
  int sum = 0;
  for (char c : text) {
    PTXBENCH_TRY_ASSIGN(int digit, parse_digit(c));
    ++*steps;
    sum += digit;
  }
  return sum;
}

Status all_digits(std::string_view text) {
  int steps = 0;
  PTXBENCH_TRY(sum_of_digits(text, &steps));
  return Ok{};
}

TEST(Try, FallsThroughOnSuccess) {
  int steps = 0;
  Expected<int> sum = sum_of_digits("123", &steps);
  ASSERT_TRUE(sum);
  EXPECT_EQ(*sum, 6);
  EXPECT_EQ(steps, 3);
}

TEST(Try, ReturnsTheFirstErrorAndStops) {
  int steps = 0;
  Expected<int> sum = sum_of_digits("1x3", &steps);
  ASSERT_FALSE(sum);
  EXPECT_EQ(sum.error().kind, ErrorKind::invalid_input);
  EXPECT_EQ(sum.error().message, "not a digit: x");
  EXPECT_EQ(steps, 1);
}

TEST(Try, CarriesTheErrorIntoAStatus) {
  EXPECT_TRUE(all_digits("42"));
  const Status bad = all_digits("4?");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "not a digit: ?");
}

Expected<std::string> text_of(int n, int* calls) {
  ++*calls;
  if (n < 0)
    return Error{ErrorKind::not_found, "no text " + std::to_string(n)};
  return std::string(static_cast<std::size_t>(n), 'x');
}

// Another Expected type than the callee's: the Error converts.
Expected<std::size_t> length_of(int n, int* calls) {
  PTXBENCH_TRY_ASSIGN(std::string text, text_of(n, calls));
  return text.size();
}

TEST(Try, AssignDeclaresTheValueNotTheExpected) {
  int calls = 0;
  const Expected<std::size_t> length = length_of(3, &calls);
  ASSERT_TRUE(length);
  EXPECT_EQ(*length, 3u);
  EXPECT_EQ(calls, 1);
  const Expected<std::size_t> missing = length_of(-1, &calls);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::not_found);
  EXPECT_EQ(calls, 2);
}

Status touch_twice(int first, int second, int* calls) {
  PTXBENCH_TRY(text_of(first, calls));
  PTXBENCH_TRY(text_of(second, calls));
  return Ok{};
}

TEST(Try, TakesAnExpressionAndEvaluatesItOnce) {
  int calls = 0;
  EXPECT_TRUE(touch_twice(1, 2, &calls));
  EXPECT_EQ(calls, 2);
  const Status bad = touch_twice(-4, 2, &calls);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "no text -4");
  EXPECT_EQ(calls, 3);
}

Status from_const(const Expected<int>& held) {
  PTXBENCH_TRY(held);
  PTXBENCH_TRY_ASSIGN(const int value, held);
  return value == 7 ? Status(Ok{}) : Status(Error{ErrorKind::invalid_input, "not 7"});
}

TEST(Try, CopiesTheErrorOfAConstExpected) {
  const Expected<int> failed = Error{ErrorKind::io, "disk"};
  const Status status = from_const(failed);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().message, "disk");
  EXPECT_EQ(failed.error().message, "disk"); // left as it was
  EXPECT_TRUE(from_const(7));
}

Status assign_existing(int n, std::string& out, int* calls) {
  PTXBENCH_TRY_ASSIGN(out, text_of(n, calls));
  return Ok{};
}

TEST(Try, AssignsToAVariableDeclaredBefore) {
  int calls = 0;
  std::string out = "kept";
  EXPECT_FALSE(assign_existing(-1, out, &calls));
  EXPECT_EQ(out, "kept");
  EXPECT_TRUE(assign_existing(2, out, &calls));
  EXPECT_EQ(out, "xx");
}

TEST(ErrorKinds, ARetiredValueNamesNoKind) {
  EXPECT_EQ(error_kind_from_value(5), ErrorKind::subprocess);
  EXPECT_EQ(error_kind_from_value(6), std::nullopt); // compile_error, retired
  EXPECT_EQ(error_kind_from_value(7), ErrorKind::banned_library);
  EXPECT_EQ(error_kind_from_value(0), std::nullopt);
  EXPECT_EQ(error_kind_from_value(14), ErrorKind::conflict);
  EXPECT_EQ(error_kind_from_value(15), std::nullopt);
  EXPECT_EQ(error_kind_from_name("compile_error"), std::nullopt);
  EXPECT_EQ(error_kind_from_name("rate_limited"), ErrorKind::rate_limited);
}

TEST(ErrorKinds, NamesRoundTripPastTheRetiredValue) {
  for (const ErrorKindInfo& info : kErrorKinds) {
    EXPECT_EQ(to_string(info.kind), info.name);
    EXPECT_EQ(error_kind_from_name(info.name), info.kind);
    EXPECT_EQ(error_kind_from_value(static_cast<std::int64_t>(info.kind)), info.kind);
  }
  EXPECT_EQ(to_string(ErrorKind::bad_response), "bad_response");
}

} // namespace
} // namespace ptxbench::util
