#include "suite/generate.hpp"
#include "suite/philox.hpp"

#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <vector>

namespace ptxbench::suite {
namespace {

struct KnownAnswer {
  PhiloxCounter counter;
  PhiloxKey key;
  PhiloxCounter expected;
};

// Random123 kat_vectors, "philox4x32 10" rows.
constexpr KnownAnswer kKnownAnswers[] = {
    {{{0, 0, 0, 0}}, {{0, 0}}, {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}}},
    {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
     {{0xffffffffu, 0xffffffffu}},
     {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}}},
    {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
     {{0xa4093822u, 0x299f31d0u}},
     {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}}},
};

TEST(Philox, MatchesRandom123KnownAnswers) {
  for (const KnownAnswer& kat : kKnownAnswers) {
    const PhiloxCounter got = philox4x32_10(kat.counter, kat.key);
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(got.word[i], kat.expected.word[i]) << "word " << i;
  }
}

TEST(Philox, IsUsableInConstantExpressions) {
  constexpr PhiloxCounter zero = philox4x32_10({{0, 0, 0, 0}}, {{0, 0}});
  static_assert(zero.word[0] == 0x6627e8d5u);
}

TEST(Bf16, RoundsToNearestEven) {
  EXPECT_EQ(bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(bf16_bits(-2.0f), 0xC000);
  EXPECT_EQ(bf16_bits(1.00390625f), 0x3F80); // exactly half way, even stays
  EXPECT_EQ(bf16_bits(1.01171875f), 0x3F82); // half way above odd 0x3F81 rounds up
  EXPECT_TRUE(std::isnan(bf16_to_float(bf16_bits(std::nanf("")))));
}

std::vector<std::byte> generate(Distribution distribution, trace::DType dtype, std::size_t count,
                                unsigned threads) {
  const std::size_t bytes = count * (dtype == trace::DType::float32 ? 4 : 2);
  std::vector<std::byte> out(bytes);
  const TensorRequest request{distribution, dtype, 0x1234'5678'9abc'def0ull, 3, count};
  EXPECT_TRUE(generate_tensor(request, out, ThreadCount{threads}).has_value());
  return out;
}

TEST(Generate, IsIdenticalForAnyThreadCount) {
  constexpr std::size_t kCount = (1u << 20) + 3;
  for (auto distribution : {Distribution::normal, Distribution::spiky}) {
    const auto one = generate(distribution, trace::DType::bfloat16, kCount, 1);
    for (unsigned threads : {2u, 3u, 7u, 16u})
      EXPECT_EQ(one, generate(distribution, trace::DType::bfloat16, kCount, threads));
  }
}

TEST(Generate, AgreesWithSingleElementValues) {
  constexpr std::size_t kCount = 4099;
  const auto tensor = generate(Distribution::spiky, trace::DType::float32, kCount, 2);
  for (std::size_t i : {std::size_t{0}, std::size_t{1}, std::size_t{5}, kCount - 1}) {
    float value = 0;
    std::memcpy(&value, tensor.data() + 4 * i, 4);
    EXPECT_EQ(value, spiky_value(0x1234'5678'9abc'def0ull, 3, i));
  }
}

struct Moments {
  double mean = 0;
  double stddev = 0;
};

Moments moments(const std::vector<std::byte>& f32) {
  const std::size_t n = f32.size() / 4;
  double sum = 0, sum_sq = 0;
  for (std::size_t i = 0; i < n; ++i) {
    float v = 0;
    std::memcpy(&v, f32.data() + 4 * i, 4);
    sum += v;
    sum_sq += static_cast<double>(v) * v;
  }
  const double mean = sum / static_cast<double>(n);
  return {mean, std::sqrt(sum_sq / static_cast<double>(n) - mean * mean)};
}

TEST(Generate, NormalHasZeroMeanUnitStddev) {
  const Moments m = moments(generate(Distribution::normal, trace::DType::float32, 1u << 22, 0));
  EXPECT_NEAR(m.mean, 0.0, 2e-3);
  EXPECT_NEAR(m.stddev, 1.0, 2e-3);
}

TEST(Generate, SpikyHasStddevOfSqrtOnePointOne) {
  const Moments m = moments(generate(Distribution::spiky, trace::DType::float32, 1u << 22, 0));
  EXPECT_NEAR(m.mean, 0.0, 1e-2);
  EXPECT_NEAR(m.stddev, std::sqrt(1.0 + 100.0 * 0.001), 1e-2);
}

TEST(Generate, DifferentTensorsAndSeedsDiffer) {
  EXPECT_NE(normal_value(1, 0, 0), normal_value(1, 1, 0));
  EXPECT_NE(normal_value(1, 0, 0), normal_value(2, 0, 0));
  EXPECT_NE(normal_value(1, 0, 0), normal_value(1, 0, 1));
}

TEST(Generate, RejectsWrongBufferAndUnsupportedRequests) {
  std::vector<std::byte> out(10);
  EXPECT_FALSE(generate_tensor({Distribution::normal, trace::DType::bfloat16, 0, 0, 6}, out));
  EXPECT_FALSE(generate_tensor({Distribution::from_forward, trace::DType::bfloat16, 0, 0, 5}, out));
  EXPECT_FALSE(generate_tensor({Distribution::normal, trace::DType::int16, 0, 0, 5}, out));
}

} // namespace
} // namespace ptxbench::suite
