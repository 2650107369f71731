// Counter-based random numbers for seeded inputs: Philox4x32-10 and the value functions built on
// it, compiled for host and device alike.
//
// Problem. Every input element of a benchmark problem must be reproducible from a 64-bit seed,
// independently of every other element, so that a tensor can be filled by any number of host
// threads or GPU threads and still come out bit-identical; sequential generators (mt19937,
// torch's global RNG) cannot do that without replaying the stream.
//
// Approach. Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11)
// is a keyed bijection of a 128-bit counter: ten rounds of two 32x32->64 multiplies whose high
// halves are xored with the other words and the round key, with the key bumped by the Weyl
// constants between rounds. The key is the seed; the counter names the draw:
//   counter = { block low 32 bits, block high 32 bits, tensor index, stream }
// where block = element / 4 (one Philox call yields four 32-bit words, i.e. four normals) and
// `stream` separates the independent draws one element needs (base normal, spike size, spike
// coin). Uniforms take the top 24 bits plus one half ulp, so they lie strictly inside (0, 1)
// and log() never sees zero. Normals come from Box-Muller on word pairs (x0,x1) and (x2,x3),
// evaluated in double precision so host (glibc) and device (CUDA libm, <= 1 ulp) agree after
// rounding to float except when a 1-ulp double difference straddles a float rounding boundary
// (about 2^-29 per element); bf16 rounding is round-to-nearest-even, done here by hand so both
// sides use the same code.
//
// Invariants. philox4x32_10 reproduces the Random123 known-answer vectors; value(seed, tensor,
// element) depends on nothing else; "spiky" is N(0,1) + N(0,100)*Bernoulli(0.001), reading
// N(0,100) as variance 100 (standard deviation 10), the FlashAttention-3 outlier distribution.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define PTXBENCH_HOST_DEVICE __host__ __device__
#else
#define PTXBENCH_HOST_DEVICE
#endif

namespace ptxbench::suite {

struct PhiloxCounter {
  std::uint32_t word[4];
};

struct PhiloxKey {
  std::uint32_t word[2];
};

inline constexpr std::uint32_t kPhiloxM0 = 0xD2511F53u;
inline constexpr std::uint32_t kPhiloxM1 = 0xCD9E8D57u;
inline constexpr std::uint32_t kPhiloxW0 = 0x9E3779B9u;
inline constexpr std::uint32_t kPhiloxW1 = 0xBB67AE85u;
inline constexpr int kPhiloxRounds = 10;

// Independent draws of one element; part of the counter.
enum class RandomStream : std::uint32_t {
  base_normal = 0,
  spike_normal = 1,
  spike_coin = 2,
  layout = 3, // index layouts (layouts.hpp); the tensor index then names the layout step
};

inline constexpr double kSpikeProbability = 0.001;
inline constexpr double kSpikeStddev = 10.0; // N(0, 100): variance 100

PTXBENCH_HOST_DEVICE constexpr PhiloxCounter philox_round(PhiloxCounter c, PhiloxKey k) {
  const std::uint64_t p0 = static_cast<std::uint64_t>(kPhiloxM0) * c.word[0];
  const std::uint64_t p1 = static_cast<std::uint64_t>(kPhiloxM1) * c.word[2];
  const auto hi0 = static_cast<std::uint32_t>(p0 >> 32);
  const auto lo0 = static_cast<std::uint32_t>(p0);
  const auto hi1 = static_cast<std::uint32_t>(p1 >> 32);
  const auto lo1 = static_cast<std::uint32_t>(p1);
  return PhiloxCounter{{hi1 ^ c.word[1] ^ k.word[0], lo1, hi0 ^ c.word[3] ^ k.word[1], lo0}};
}

PTXBENCH_HOST_DEVICE constexpr PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key) {
  for (int round = 0; round < kPhiloxRounds; ++round) {
    if (round > 0) {
      key.word[0] += kPhiloxW0;
      key.word[1] += kPhiloxW1;
    }
    counter = philox_round(counter, key);
  }
  return counter;
}

PTXBENCH_HOST_DEVICE constexpr PhiloxCounter draw_block(std::uint64_t seed,
                                                        std::uint32_t tensor_index,
                                                        std::uint64_t block, RandomStream stream) {
  const PhiloxCounter counter{{static_cast<std::uint32_t>(block),
                               static_cast<std::uint32_t>(block >> 32), tensor_index,
                               static_cast<std::uint32_t>(stream)}};
  const PhiloxKey key{{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)}};
  return philox4x32_10(counter, key);
}

// Strictly inside (0, 1): 24 random bits plus half an ulp.
PTXBENCH_HOST_DEVICE constexpr double uniform_open(std::uint32_t bits) {
  return (static_cast<double>(bits >> 8) + 0.5) * (1.0 / 16777216.0);
}

struct Normal4 {
  float value[4];
};

PTXBENCH_HOST_DEVICE inline Normal4 box_muller4(PhiloxCounter bits) {
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  Normal4 out{};
  for (std::size_t pair = 0; pair < 2; ++pair) {
    const double radius = sqrt(-2.0 * log(uniform_open(bits.word[2 * pair])));
    const double angle = kTwoPi * uniform_open(bits.word[2 * pair + 1]);
    out.value[2 * pair] = static_cast<float>(radius * cos(angle));
    out.value[2 * pair + 1] = static_cast<float>(radius * sin(angle));
  }
  return out;
}

// N(0,1) for elements 4*block .. 4*block+3 of one tensor.
PTXBENCH_HOST_DEVICE inline Normal4 normal_block(std::uint64_t seed, std::uint32_t tensor_index,
                                                 std::uint64_t block) {
  return box_muller4(draw_block(seed, tensor_index, block, RandomStream::base_normal));
}

// N(0,1) + N(0,100)*Bernoulli(0.001) for elements 4*block .. 4*block+3.
PTXBENCH_HOST_DEVICE inline Normal4 spiky_block(std::uint64_t seed, std::uint32_t tensor_index,
                                                std::uint64_t block) {
  Normal4 base = normal_block(seed, tensor_index, block);
  const PhiloxCounter coin = draw_block(seed, tensor_index, block, RandomStream::spike_coin);
  bool hit[4] = {};
  bool any_hit = false;
  for (int lane = 0; lane < 4; ++lane) {
    hit[lane] = uniform_open(coin.word[lane]) < kSpikeProbability;
    any_hit = any_hit || hit[lane];
  }
  if (!any_hit)
    return base;
  const Normal4 spike =
      box_muller4(draw_block(seed, tensor_index, block, RandomStream::spike_normal));
  for (int lane = 0; lane < 4; ++lane)
    if (hit[lane])
      base.value[lane] = static_cast<float>(base.value[lane] + kSpikeStddev * spike.value[lane]);
  return base;
}

PTXBENCH_HOST_DEVICE inline float normal_value(std::uint64_t seed, std::uint32_t tensor_index,
                                               std::uint64_t element) {
  return normal_block(seed, tensor_index, element / 4).value[element % 4];
}

PTXBENCH_HOST_DEVICE inline float spiky_value(std::uint64_t seed, std::uint32_t tensor_index,
                                              std::uint64_t element) {
  return spiky_block(seed, tensor_index, element / 4).value[element % 4];
}

// Round-to-nearest-even float -> bfloat16 bits; NaN stays a quiet NaN.
PTXBENCH_HOST_DEVICE inline std::uint16_t bf16_bits(float value) {
  std::uint32_t bits = 0;
  memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u)
    return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(bits >> 16);
}

PTXBENCH_HOST_DEVICE inline float bf16_to_float(std::uint16_t bits) {
  const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
  float value = 0.0f;
  memcpy(&value, &wide, sizeof value);
  return value;
}

} // namespace ptxbench::suite
