// UMMA shared-memory matrix descriptor for tcgen05.mma (PTX ISA 9.1 §9.7.16.4.1) and the
// canonical bf16 tile layouts it describes.
//
// 64 bits:
//   [0,14)  start address: (smem_offset & 0x3FFFF) >> 4
//   [16,30) leading-dimension byte offset (LBO) >> 4
//   [32,46) stride-dimension byte offset (SBO) >> 4
//   [46,49) fixed 0b001 (the "version"; 0 here is the classic Hopper-to-Blackwell porting bug)
//   [49,52) base offset (0 when every swizzled tile starts on its 1024/512/256-B period)
//   [52]    LBO mode: 0 = relative byte offset (use 0; absolute mode is sm_103a only)
//   [61,64) swizzle: 0 none, 1 128B with 32-B atoms, 2 128B, 4 64B, 6 32B (3, 5, 7 invalid)
// Other bits 0. Differences from the sm90 wgmma descriptor: the version bits 46-48, and a 3-bit
// swizzle field at 61 instead of a 2-bit one at 62. For 128B/64B/32B the sm90 code << 62 equals
// the sm100 code << 61 (1<<62 == 2<<61, 2<<62 == 4<<61, 3<<62 == 6<<61), so only the version
// bits are new for those modes; 128B-with-32B-atoms has no sm90 counterpart.
//
// Canonical layouts are the Hopper ones (knowledge/sm90a/contract.md §2, proven there for wgmma;
// UNPROVEN for tcgen05): for an operand of `mn` rows (M of A, N of B) and `k` columns (K),
// swizzle span S = 32/64/128 B, W = S/2 bf16:
//   K-major, swizzled: offset kb*mn*S + row*S + (k%W)*2 with kb = k/W; LBO unused (encode 16 B),
//     SBO = 8*S (next 8-row group). One tcgen05.mma consumes K = 16 (32 B): k16 step s starts at
//     (16s/W)*mn*S + (16s%W)*2.
//   MN-major, swizzled: offset nb*k*S + k*S + (row%W)*2 with nb = row/W; LBO = k*S (next W-wide
//     MN block), SBO = 8*S (next 8-k group); k16 step s starts at 16*s*S.
//   No swizzle (8x8 core matrices of 16-B rows): K-major LBO = mn*16, SBO = 128; MN-major
//     LBO = 128, SBO = k*16.
// The 16-B chunk bits [4,7) of the address are XORed with bits [7,10) (128B), [7,9) (64B),
// bit 7 (32B): the same rule as TMA's SWIZZLE_128B/64B/32B, on absolute shared addresses.
#pragma once

#include "knowledge/sm100a/base.cuh"

namespace sm100 {

enum class UmmaSwizzle : uint32_t {
  kNone = 0,
  k128BBase32B = 1,
  k128B = 2,
  k64B = 4,
  k32B = 6,
};

enum class Major : uint32_t { kK = 0, kMN = 1 };

// Bytes of one swizzled row (16 for none: one core-matrix row; 128 for both 128B modes).
__host__ __device__ constexpr uint32_t umma_swizzle_span_bytes(UmmaSwizzle s) {
  return s == UmmaSwizzle::k128B || s == UmmaSwizzle::k128BBase32B ? 128u
         : s == UmmaSwizzle::k64B                                  ? 64u
         : s == UmmaSwizzle::k32B                                  ? 32u
                                                                   : 16u;
}

// Descriptor from a shared-window offset and byte strides.
// Instance: make_umma_desc(0x400, 16, 1024, UmmaSwizzle::k128B) == 0x4000404000010040.
__host__ __device__ constexpr uint64_t make_umma_desc(uint32_t smem_addr, uint32_t lbo_bytes,
                                                      uint32_t sbo_bytes, UmmaSwizzle swizzle,
                                                      uint32_t base_offset = 0) {
  return static_cast<uint64_t>((smem_addr & 0x3FFFFu) >> 4) |
         static_cast<uint64_t>((lbo_bytes >> 4) & 0x3FFFu) << 16 |
         static_cast<uint64_t>((sbo_bytes >> 4) & 0x3FFFu) << 32 | uint64_t{1} << 46 |
         static_cast<uint64_t>(base_offset & 7u) << 49 |
         static_cast<uint64_t>(static_cast<uint32_t>(swizzle)) << 61;
}

static_assert(make_umma_desc(0x400, 16, 1024, UmmaSwizzle::k128B) == 0x4000404000010040ull);
static_assert((uint64_t{1} << 62) == (uint64_t{2} << 61) &&
              (uint64_t{2} << 62) == (uint64_t{4} << 61) &&
              (uint64_t{3} << 62) == (uint64_t{6} << 61));

// A bf16 operand tile in shared memory, `mn` x `k` elements, in the canonical layout above.
struct UmmaBf16Tile {
  UmmaSwizzle swizzle;
  Major major;
  uint32_t mn;
  uint32_t k;

  __host__ __device__ constexpr uint32_t span() const { return umma_swizzle_span_bytes(swizzle); }
  __host__ __device__ constexpr uint32_t bytes() const { return mn * k * 2u; }

  __host__ __device__ constexpr uint32_t lbo() const {
    if (swizzle == UmmaSwizzle::kNone)
      return major == Major::kK ? mn * 16u : 128u;
    return major == Major::kK ? 16u : k * span();
  }

  __host__ __device__ constexpr uint32_t sbo() const {
    return swizzle == UmmaSwizzle::kNone ? (major == Major::kK ? 128u : k * 16u) : 8u * span();
  }

  // Byte offset of the first element of k16 step `step` (K column 16*step).
  __host__ __device__ constexpr uint32_t k_step_offset(uint32_t step) const {
    const uint32_t col = 16u * step;
    if (swizzle == UmmaSwizzle::kNone)
      return major == Major::kK ? (col / 8u) * (mn * 16u) : (col / 8u) * 128u;
    const uint32_t w = span() / 2u;
    return major == Major::kK ? (col / w) * mn * span() + (col % w) * 2u : col * span();
  }

  // Descriptor of k16 step `step` for a tile starting at shared offset `tile_addr`.
  __host__ __device__ constexpr uint64_t desc(uint32_t tile_addr, uint32_t step) const {
    return make_umma_desc(tile_addr + k_step_offset(step), lbo(), sbo(), swizzle);
  }
};

static_assert(UmmaBf16Tile{UmmaSwizzle::k128B, Major::kK, 128, 64}.desc(0x400, 1) ==
              0x4000404000010042ull);

} // namespace sm100
