// PTXBENCH_TRY returns the error of a failed Expected or Status and falls through on success.
#include "util/error.hpp"

#include <gtest/gtest.h>

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
    Expected<int> digit = parse_digit(c);
    PTXBENCH_TRY(digit);
    ++*steps;
    sum += *digit;
  }
  return sum;
}

Status all_digits(std::string_view text) {
  int steps = 0;
  Expected<int> sum = sum_of_digits(text, &steps);
  PTXBENCH_TRY(sum);
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

} // namespace
} // namespace ptxbench::util
