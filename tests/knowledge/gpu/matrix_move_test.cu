// stmatrix / ldmatrix x1, x2, x4, plain and .trans: one warp stores fragments whose values name
// their (matrix, row, column) and the host checks where each landed; ldmatrix reads them back
// and each lane checks its fragment on the device.
#include "harness.cuh"
#include "knowledge/sm90a/ptx.cuh"

namespace {

using sm90::Transpose;

constexpr uint32_t kArea = 256; // four 8x8 b16 matrices, rows of 16 B
constexpr uint32_t kAreas = 4;

__host__ __device__ constexpr uint32_t tag(uint32_t m, uint32_t r, uint32_t c) {
  return (m << 8) | (r << 4) | c;
}

__device__ uint32_t fragment(uint32_t m, uint32_t r, uint32_t c) {
  return tag(m, r, c) | tag(m, r, c + 1) << 16;
}

__global__ void __launch_bounds__(32, 1) matrix_move_kernel(uint16_t* out, uint32_t* ok) {
  __shared__ __align__(16) uint16_t s[kAreas][kArea];
  const uint32_t l = threadIdx.x, g = l / 4, q = l % 4;
  for (uint32_t i = l; i < kAreas * kArea; i += 32)
    s[i / kArea][i % kArea] = 0xffff;
  __syncwarp();
  uint32_t x[4];
  for (uint32_t m = 0; m < 4; ++m)
    x[m] = fragment(m, g, 2 * q);
  auto row_addr = [&](uint32_t area) {
    return sm90::smem_u32(&s[area][(l / 8) * 64 + (l % 8) * 8]);
  };
  sm90::stmatrix_x4(row_addr(0), x);
  sm90::stmatrix_x4<Transpose::kYes>(row_addr(1), x);
  sm90::stmatrix_x2(row_addr(2), {x[0], x[1]});
  sm90::stmatrix_x1(row_addr(3), x[0]);
  __syncwarp();
  for (uint32_t i = l; i < kAreas * kArea; i += 32)
    out[i] = s[i / kArea][i % kArea];

  uint32_t pass = 0;
  uint32_t y[4];
  sm90::ldmatrix_x4(y, row_addr(0));
  pass |= (y[0] == x[0] && y[1] == x[1] && y[2] == x[2] && y[3] == x[3]) << 0;
  sm90::ldmatrix_x4<Transpose::kYes>(y, row_addr(0));
  bool t4 = true;
  for (uint32_t m = 0; m < 4; ++m)
    t4 &= y[m] == (tag(m, 2 * q, g) | tag(m, 2 * q + 1, g) << 16);
  pass |= t4 << 1;
  uint32_t y2[2];
  sm90::ldmatrix_x2(y2, row_addr(0));
  pass |= (y2[0] == x[0] && y2[1] == x[1]) << 2;
  sm90::ldmatrix_x2<Transpose::kYes>(y2, row_addr(0));
  pass |= (y2[1] == (tag(1, 2 * q, g) | tag(1, 2 * q + 1, g) << 16)) << 3;
  pass |= (sm90::ldmatrix_x1(row_addr(0)) == x[0]) << 4;
  pass |= (sm90::ldmatrix_x1<Transpose::kYes>(row_addr(1)) == x[0]) << 5;
  ok[l] = pass;
}

std::string matrix_move_case() {
  kp::DeviceBuffer<uint16_t> out(kAreas * kArea);
  kp::DeviceBuffer<uint32_t> ok(32);
  matrix_move_kernel<<<1, 32>>>(out.get(), ok.get());
  if (std::string e = kp::sync_kernel("matrix_move_kernel"); !e.empty())
    return e;
  const std::vector<uint16_t> got = out.download();
  for (uint32_t m = 0; m < 4; ++m)
    for (uint32_t r = 0; r < 8; ++r)
      for (uint32_t c = 0; c < 8; ++c) {
        const uint32_t at = m * 64 + r * 8 + c;
        const std::string where =
            "(" + std::to_string(m) + "," + std::to_string(r) + "," + std::to_string(c) + ")";
        if (got[at] != tag(m, r, c))
          return "stmatrix.x4 " + where;
        if (got[kArea + at] != tag(m, c, r))
          return "stmatrix.x4.trans " + where;
        if (got[2 * kArea + at] != (m < 2 ? tag(m, r, c) : 0xffffu))
          return "stmatrix.x2 " + where;
        if (got[3 * kArea + at] != (m < 1 ? tag(m, r, c) : 0xffffu))
          return "stmatrix.x1 " + where;
      }
  const std::vector<uint32_t> flags = ok.download();
  const char* names[6] = {"ldmatrix.x4",       "ldmatrix.x4.trans", "ldmatrix.x2",
                          "ldmatrix.x2.trans", "ldmatrix.x1",       "ldmatrix.x1.trans"};
  for (uint32_t lane = 0; lane < 32; ++lane)
    for (int bit = 0; bit < 6; ++bit)
      if (!(flags[lane] >> bit & 1u))
        return std::string(names[bit]) + " wrong in lane " + std::to_string(lane);
  return {};
}

const kp::Register reg_mm("stmatrix_ldmatrix_roundtrip", &matrix_move_case);

} // namespace
