// Shared-memory matrix descriptors for wgmma (PTX ISA 9.1 §9.7.15.5.1.2) and the canonical bf16
// tile layouts they describe.
//
// A descriptor is 64 bits:
//   [0,14)  start address: (smem_offset & 0x3FFFF) >> 4   (shared-window offset, 16-B units)
//   [16,30) leading-dimension byte offset (LBO) >> 4
//   [32,46) stride-dimension byte offset (SBO) >> 4
//   [49,52) base offset (0 when every swizzled tile starts on its 1024/512/256-B period)
//   [62,64) swizzle: 0 none (interleave), 1 128B, 2 64B, 3 32B
// Every other bit is 0. Fields hold BYTES >> 4, never raw bytes.
//
// `Bf16Tile` is the contract a kernel and its descriptors share: for an operand of extent `mn`
// (M rows of A, N columns of B) by `k` (the K depth held in shared memory) it gives the byte
// offset of element (mn, k), the LBO/SBO, and the descriptor of k16 step s. The GPU tests
// (tests/knowledge/gpu) prove every combination of swizzle x major-ness against wgmma and TMA.
//
//   K-major, swizzle span S (32/64/128 B), W = S/2 elements: rows of W k-values, pitch S bytes;
//     K-blocks of W columns are stacked (block kb at kb * mn * S). Offset before swizzling:
//     kb*mn*S + row*S + (k%W)*2. LBO unused (encoded 1); SBO = 8*S (next 8-row group).
//   K-major, no swizzle: 8x8 core matrices (8 rows x 16 B, 128 B contiguous). Offset:
//     (k/8)*(mn*16) + (row/8)*128 + (row%8)*16 + (k%8)*2.
//     LBO = mn*16 (next core matrix along K), SBO = 128 (next 8-row group).
//   MN-major, span S: rows of W mn-values indexed by k, pitch S; MN-blocks of W values stacked
//     (block nb at nb * k_extent * S). Offset: nb*k_extent*S + k*S + (mn%W)*2.
//     LBO = k_extent*S (next W-wide MN block), SBO = 8*S (next 8-k group).
//   MN-major, no swizzle: core matrix = 8 k-rows x 8 mn (16 B). Offset:
//     (mn/8)*(k_extent*16) + (k/8)*128 + (k%8)*16 + (mn%8)*2.
//     LBO = 128 (next core matrix along K), SBO = k_extent*16 (next 8-wide MN group).
// Swizzling XORs the 16-B chunk bits [4,7) with the row bits [7,10) of the byte offset:
//   128B: bits[4:6] ^= bits[7:9]; 64B: bits[4:5] ^= bits[7:8]; 32B: bit 4 ^= bit 7.
// The XOR uses absolute shared addresses, so a swizzled tile must start on its pattern period
// (1024 B for 128B; aligning every swizzled tile to 1024 B is the simple rule).
#pragma once

#include "knowledge/sm90a/base.cuh"

namespace sm90 {

enum class Swizzle : uint32_t { kNone = 0, k128B = 1, k64B = 2, k32B = 3 };
enum class Major : int { kK = 0, kMN = 1 };

// Bytes of one swizzled row (16 for none: one core-matrix row).
__host__ __device__ constexpr uint32_t swizzle_span_bytes(Swizzle s) {
  return s == Swizzle::k128B ? 128u : s == Swizzle::k64B ? 64u : s == Swizzle::k32B ? 32u : 16u;
}

// Alignment a tile of this swizzle needs for base offset 0: 8 rows of the span.
__host__ __device__ constexpr uint32_t swizzle_period_bytes(Swizzle s) {
  return 8u * swizzle_span_bytes(s);
}

// Physical byte offset of logical byte offset `o` inside a tile that starts on its period.
__host__ __device__ constexpr uint32_t swizzle_offset(Swizzle s, uint32_t o) {
  const uint32_t mask = s == Swizzle::k128B  ? 7u
                        : s == Swizzle::k64B ? 3u
                        : s == Swizzle::k32B ? 1u
                                             : 0u;
  return o ^ (((o >> 7) & mask) << 4);
}

// Descriptor from a shared-window offset and byte strides.
// Instance: make_smem_desc(0x400, 16, 1024, Swizzle::k128B) == 0x4000004000010040.
__host__ __device__ constexpr uint64_t make_smem_desc(uint32_t smem_addr, uint32_t lbo_bytes,
                                                      uint32_t sbo_bytes, Swizzle swizzle,
                                                      uint32_t base_offset = 0) {
  return static_cast<uint64_t>((smem_addr & 0x3FFFFu) >> 4) |
         static_cast<uint64_t>((lbo_bytes >> 4) & 0x3FFFu) << 16 |
         static_cast<uint64_t>((sbo_bytes >> 4) & 0x3FFFu) << 32 |
         static_cast<uint64_t>(base_offset & 7u) << 49 |
         static_cast<uint64_t>(static_cast<uint32_t>(swizzle)) << 62;
}

static_assert(make_smem_desc(0x400, 16, 1024, Swizzle::k128B) == 0x4000004000010040ull);

// A bf16 operand tile in shared memory, `mn` x `k` elements, laid out as the header says.
struct Bf16Tile {
  Swizzle swizzle;
  Major major;
  uint32_t mn;
  uint32_t k;

  __host__ __device__ constexpr uint32_t span() const { return swizzle_span_bytes(swizzle); }
  __host__ __device__ constexpr uint32_t bytes() const { return mn * k * 2u; }

  // Byte offset of element (row along M/N, column along K) from the tile start.
  __host__ __device__ constexpr uint32_t offset(uint32_t row, uint32_t col) const {
    const uint32_t w = span() / 2u;
    if (swizzle == Swizzle::kNone) {
      return major == Major::kK
                 ? (col / 8u) * (mn * 16u) + (row / 8u) * 128u + (row % 8u) * 16u + (col % 8u) * 2u
                 : (row / 8u) * (k * 16u) + (col / 8u) * 128u + (col % 8u) * 16u + (row % 8u) * 2u;
    }
    const uint32_t logical = major == Major::kK
                                 ? (col / w) * mn * span() + row * span() + (col % w) * 2u
                                 : (row / w) * k * span() + col * span() + (row % w) * 2u;
    return swizzle_offset(swizzle, logical);
  }

  __host__ __device__ constexpr uint32_t lbo() const {
    if (swizzle == Swizzle::kNone)
      return major == Major::kK ? mn * 16u : 128u;
    return major == Major::kK ? 16u : k * span();
  }

  __host__ __device__ constexpr uint32_t sbo() const {
    if (swizzle == Swizzle::kNone)
      return major == Major::kK ? 128u : k * 16u;
    return 8u * span();
  }

  // Byte offset of the first element of k16 step `step` (column 16*step); stays within the
  // period alignment, so the descriptor keeps base offset 0.
  __host__ __device__ constexpr uint32_t k_step_offset(uint32_t step) const {
    const uint32_t col = 16u * step;
    if (swizzle == Swizzle::kNone)
      return major == Major::kK ? (col / 8u) * (mn * 16u) : (col / 8u) * 128u;
    const uint32_t w = span() / 2u;
    return major == Major::kK ? (col / w) * mn * span() + (col % w) * 2u : col * span();
  }

  // Descriptor of k16 step `step` for a tile starting at shared offset `tile_addr`.
  __host__ __device__ constexpr uint64_t desc(uint32_t tile_addr, uint32_t step) const {
    return make_smem_desc(tile_addr + k_step_offset(step), lbo(), sbo(), swizzle);
  }
};

} // namespace sm90
