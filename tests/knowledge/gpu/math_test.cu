// knowledge/sm90a/math.cuh on the GPU: exp2_approx_ftz against the host's exp2 in double over
// the whole finite range plus the special values, and pack_bf16x2 against host round-to-nearest-
// even, half by half (the PTX operand order puts the first source in the upper half).
#include "harness.cuh"
#include "knowledge/sm90a/math.cuh"

#include <cmath>
#include <limits>

namespace {

__global__ void exp2_kernel(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = sm90::exp2_approx_ftz(x[i]);
}

__global__ void pack_kernel(const float* lo, const float* hi, uint32_t* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = sm90::pack_bf16x2(lo[i], hi[i]);
}

std::string describe(const char* what, float x, double got, double want) {
  char line[200];
  std::snprintf(line, sizeof line, "%s: x = %.9g gave %.9g, expected %.9g", what, x, got, want);
  return line;
}

std::string exp2_case() {
  constexpr float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x;
  // 2^20 points over [-125.999, 127.999] (every result a normal float), then the edges.
  constexpr int kSweep = 1 << 20;
  for (int i = 0; i < kSweep; ++i)
    x.push_back(-125.999f + 253.998f * (float(i) / float(kSweep)));
  const std::vector<float> specials{
      0.0f,    -0.0f,   1.0f,     -1.0f,  0.5f, 127.0f, -126.0f,
      -130.0f, -149.0f, -1000.0f, 200.0f, -inf, inf,    std::numeric_limits<float>::quiet_NaN()};
  const size_t first_special = x.size();
  x.insert(x.end(), specials.begin(), specials.end());
  const int n = static_cast<int>(x.size());
  kp::DeviceBuffer<float> dx(x.size()), dy(x.size());
  dx.upload(x);
  exp2_kernel<<<(n + 255) / 256, 256>>>(dx.get(), dy.get(), n);
  if (std::string e = kp::sync_kernel("exp2_kernel"); !e.empty())
    return e;
  const std::vector<float> y = dy.download();

  double worst = 0.0;
  for (size_t i = 0; i < first_special; ++i) {
    const double want = std::exp2(static_cast<double>(x[i]));
    const double rel = std::fabs(static_cast<double>(y[i]) - want) / want;
    if (!(rel <= std::ldexp(1.0, -21)))
      return describe("relative error above 2^-21", x[i], y[i], want);
    worst = std::max(worst, rel);
  }
  auto at = [&](size_t k) { return y[first_special + k]; };
  if (at(0) != 1.0f || at(1) != 1.0f)
    return describe("2^0", x[first_special], at(0), 1.0);
  if (std::fabs(at(2) - 2.0f) > 2.0f * 0x1p-21f)
    return describe("2^1", 1.0f, at(2), 2.0);
  if (std::fabs(at(3) - 0.5f) > 0.5f * 0x1p-21f)
    return describe("2^-1", -1.0f, at(3), 0.5);
  if (std::fabs(at(6) - 0x1p-126f) > 0x1p-126f * 0x1p-21f)
    return describe("2^-126 (smallest normal)", -126.0f, at(6), 0x1p-126);
  // Results below the normal range are flushed to +0 (exp2f would keep 2^-130 as a subnormal).
  for (size_t k : {size_t{7}, size_t{8}, size_t{9}})
    if (at(k) != 0.0f || std::signbit(at(k)))
      return describe("flush to +0", specials[k], at(k), 0.0);
  if (at(10) != inf)
    return describe("overflow", 200.0f, at(10), inf);
  if (at(11) != 0.0f)
    return describe("2^-inf", -inf, at(11), 0.0);
  if (at(12) != inf)
    return describe("2^inf", inf, at(12), inf);
  if (!std::isnan(at(13)))
    return describe("NaN", specials[13], at(13), specials[13]);
  std::printf("    exp2_approx_ftz: worst relative error %.3g (2^%.2f) over %d points\n", worst,
              std::log2(worst), kSweep);
  return {};
}

std::string pack_case() {
  std::vector<float> lo, hi;
  // Ties: 1 + 2^-8 lies halfway between bf16 1 and 1 + 2^-7 (rounds to the even 1.0);
  // 1 + 3 * 2^-8 halfway between 1 + 2^-7 and 1 + 2^-6 (rounds to the even 1 + 2^-6).
  lo.push_back(1.0f + 0x1p-8f);
  hi.push_back(1.0f + 3 * 0x1p-8f);
  lo.push_back(-2.0f);
  hi.push_back(3.0f);
  lo.push_back(0.0f);
  hi.push_back(-0.0f);
  const std::vector<float> a = kp::small_ints(4096, 7, 1000), b = kp::small_ints(4096, 11, 1000);
  for (size_t i = 0; i < a.size(); ++i) {
    lo.push_back(a[i] / 7.0f);
    hi.push_back(b[i] * 1.0e-3f + 0.3f);
  }
  const int n = static_cast<int>(lo.size());
  kp::DeviceBuffer<float> dlo(lo.size()), dhi(hi.size());
  kp::DeviceBuffer<uint32_t> dout(lo.size());
  dlo.upload(lo);
  dhi.upload(hi);
  pack_kernel<<<(n + 255) / 256, 256>>>(dlo.get(), dhi.get(), dout.get(), n);
  if (std::string e = kp::sync_kernel("pack_kernel"); !e.empty())
    return e;
  const std::vector<uint32_t> out = dout.download();
  if (out[0] != 0x3F823F80u) {
    char line[120];
    std::snprintf(line, sizeof line, "ties: got 0x%08X, expected 0x3F823F80 (hi 1+2^-6, lo 1)",
                  out[0]);
    return line;
  }
  if (out[1] != 0x4040C000u || out[2] != 0x80000000u)
    return "signs or halves swapped";
  for (size_t i = 0; i < out.size(); ++i) {
    const uint32_t want = (uint32_t{kp::bf16_bits(hi[i])} << 16) | kp::bf16_bits(lo[i]);
    if (out[i] != want) {
      char line[160];
      std::snprintf(line, sizeof line, "element %zu: lo %.9g hi %.9g gave 0x%08X, expected 0x%08X",
                    i, lo[i], hi[i], out[i], want);
      return line;
    }
  }
  return {};
}

const kp::Register reg_exp2("math_exp2_approx_ftz_range_and_specials", &exp2_case);
const kp::Register reg_pack("math_pack_bf16x2_halves_and_round_to_nearest_even", &pack_case);

} // namespace
