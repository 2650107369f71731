// tcgen05 (PTX ISA 9.1 §9.7.16): tensor memory (TMEM) and the 5th-generation tensor-core MMA.
//
// TMEM: per CTA 128 lanes x 512 columns x 32 bit. Address (32 bit) = (lane << 16) | column.
// Issue granularity: alloc / dealloc / relinquish by one whole warp (cta_group::2: one warp in
// EACH CTA of the pair); mma / commit by ONE thread (cta_group::2: one thread of the leader CTA);
// ld / st / wait by whole warps, warp w reaching only lanes 32*(w%4) .. 32*(w%4)+31.
// Every tcgen05 instruction of a kernel uses the same cta_group (ptxas rejects a mix).
//
// Ordering: tcgen05 ops are asynchronous. Across threads they are ordered only by
//   tcgen05_fence_before_thread_sync(); <barrier / mbarrier arrive>   (in the producer)
//   <barrier / mbarrier wait>; tcgen05_fence_after_thread_sync();     (in the consumer)
// MMA completion: tcgen05_commit(bar) makes `bar` receive one arrival when every earlier
// tcgen05.mma of the issuing thread has finished (and its smem operands may be overwritten).
// tcgen05.ld results are valid only after tmem_wait_ld(regs).
//
// GEMM step (cta_group::1, M = 128, bf16 -> f32):
//   alloc warp: tmem_alloc<256>(smem_u32(&slot)); tmem_relinquish_alloc_permit();
//               fence_before; __syncthreads(); fence_after; d = slot;
//   MMA thread: wait full[s]; fence_after; for k: mma_f16_ss(d, da(k), db(k), idesc, acc);
//               tcgen05_commit(empty[s]); ... after the last k block: tcgen05_commit(tmem_full);
//   epilogue warp w: wait tmem_full; fence_after;
//               tmem_ld<TmemShape::k32x32b, 32>(d + tmem_lane_offset(32 * (w % 4)) + col, r);
//               tmem_wait_ld(r); ... fence_before; arrive tmem_empty / final barrier;
//   alloc warp: tmem_dealloc<256>(d) after every TMEM user passed that barrier.
#pragma once

#include "knowledge/sm100a/base.cuh"
#include "knowledge/sm100a/umma_desc.cuh"

namespace sm100 {

enum class CtaGroup : int { k1 = 1, k2 = 2 };

// D = A*B (kOverwrite, the first K step of a tile) or D += A*B (kAccumulate).
enum class Accumulate : uint32_t { kOverwrite = 0, kAccumulate = 1 };

// ---- TMEM addresses ------------------------------------------------------------------------

__host__ __device__ constexpr uint32_t tmem_addr(uint32_t lane, uint32_t column) {
  return (lane << 16) | column;
}

// Added to an allocated base address to move `lanes` lanes down.
__host__ __device__ constexpr uint32_t tmem_lane_offset(uint32_t lanes) {
  return lanes << 16;
}

// First lane warp `warp` (index in the CTA) may access with tcgen05.ld / st.
__host__ __device__ constexpr uint32_t tmem_warp_lane_base(uint32_t warp) {
  return 32u * (warp % 4u);
}

static_assert(tmem_addr(96, 64) == 0x00600040u);

// ---- allocation ----------------------------------------------------------------------------

// Allocates kCols columns (all 128 lanes) and writes the TMEM base address to the 4-byte shared
// slot `slot` (read it after fence_before / barrier / fence_after). Whole warp; may block while
// other CTAs on the SM hold the columns. kCols: power of two in [32, 512].
// PTX: tcgen05.alloc.cta_group.sync.aligned{.shared::cta}.b32 [dst], nCols;
//   .cta_group = .cta_group::1 | .cta_group::2
// Instance: tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 256;
template <uint32_t kCols, CtaGroup G = CtaGroup::k1>
__device__ __forceinline__ void tmem_alloc(uint32_t slot) {
  static_assert(kCols >= 32 && kCols <= 512 && (kCols & (kCols - 1)) == 0,
                "tcgen05.alloc: power of two in [32, 512]");
  asm volatile("tcgen05.alloc.cta_group::%2.sync.aligned.shared::cta.b32 [%0], %1;\n" ::"r"(slot),
               "n"(kCols), "n"(static_cast<int>(G))
               : "memory");
}

// Frees what tmem_alloc<kCols> returned; same warp role, same kCols; before the CTA exits.
// PTX: tcgen05.dealloc.cta_group.sync.aligned.b32 taddr, nCols;
// Instance: tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r1, 256;
template <uint32_t kCols, CtaGroup G = CtaGroup::k1>
__device__ __forceinline__ void tmem_dealloc(uint32_t taddr) {
  static_assert(kCols >= 32 && kCols <= 512 && (kCols & (kCols - 1)) == 0,
                "tcgen05.dealloc: power of two in [32, 512]");
  asm volatile("tcgen05.dealloc.cta_group::%2.sync.aligned.b32 %0, %1;\n" ::"r"(taddr), "n"(kCols),
               "n"(static_cast<int>(G))
               : "memory");
}

// This CTA will allocate no more (lets blocked allocators elsewhere proceed); allocating after
// it is an error. Whole warp.
// PTX: tcgen05.relinquish_alloc_permit.cta_group.sync.aligned;
// Instance: tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
template <CtaGroup G = CtaGroup::k1>
__device__ __forceinline__ void tmem_relinquish_alloc_permit() {
  asm volatile(
      "tcgen05.relinquish_alloc_permit.cta_group::%0.sync.aligned;\n" ::"n"(static_cast<int>(G))
      : "memory");
}

// ---- instruction descriptor (kind::f16) ----------------------------------------------------
// 32 bits (PTX ISA 9.1 §9.7.16.4.2): [0,2) sparsity selector 0, [2] sparse 0, [3] saturate 0,
// [4,6) D type (0 F16, 1 F32), [7,10) A type, [10,13) B type (0 F16, 1 BF16), [13] negate A,
// [14] negate B, [15] A major (0 K, 1 MN), [16] B major, [17,23) N >> 3, [23] reserved,
// [24,29) M >> 4, [29] reserved, [30,32) max shift (.ws only, 0).
// Shapes (kind::f16, K = 16; M is the whole pair's M for cta_group::2): cta_group::1 M = 64
// (N 8..256 step 8) or 128 (N 16..256 step 16); cta_group::2 M = 128 (N 32..256 step 32) or
// 256 (N 16..256 step 16).

enum class F16Type : uint32_t { kF16 = 0, kBF16 = 1 };
enum class AccType : uint32_t { kF16 = 0, kF32 = 1 };

__host__ __device__ constexpr uint32_t make_idesc_f16(uint32_t m, uint32_t n, Major a_major,
                                                      Major b_major, F16Type ab = F16Type::kBF16,
                                                      AccType d = AccType::kF32) {
  return static_cast<uint32_t>(d) << 4 | static_cast<uint32_t>(ab) << 7 |
         static_cast<uint32_t>(ab) << 10 | static_cast<uint32_t>(a_major) << 15 |
         static_cast<uint32_t>(b_major) << 16 | (n >> 3) << 17 | (m >> 4) << 24;
}

// Whether (M, N) is a dense kind::f16 shape of this cta_group.
__host__ __device__ constexpr bool valid_f16_shape(CtaGroup g, uint32_t m, uint32_t n) {
  if (g == CtaGroup::k1)
    return (m == 64 && n >= 8 && n <= 256 && n % 8 == 0) ||
           (m == 128 && n >= 16 && n <= 256 && n % 16 == 0);
  return (m == 128 && n >= 32 && n <= 256 && n % 32 == 0) ||
         (m == 256 && n >= 16 && n <= 256 && n % 16 == 0);
}

static_assert(make_idesc_f16(128, 256, Major::kK, Major::kK) == 0x08400490u);
static_assert(make_idesc_f16(256, 256, Major::kK, Major::kK) == 0x10400490u);
static_assert(make_idesc_f16(128, 128, Major::kK, Major::kMN) == 0x08210490u);

// ---- MMA -----------------------------------------------------------------------------------

// D[tmem] (=|+=) A[smem] * B[smem]; A M x 16, B N x 16 (per their descriptors), D M x N f32.
// PTX: tcgen05.mma.cta_group.kind [d-tmem], a-desc, b-desc, idesc{, disable-output-lane},
//          enable-input-d{, scale-input-d};   .kind = .kind::f16 | .kind::tf32 | .kind::f8f6f4 | ..
// Instance: tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, p;
template <CtaGroup G = CtaGroup::k1>
__device__ __forceinline__ void mma_f16_ss(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc,
                                           uint32_t idesc, Accumulate acc) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
               "tcgen05.mma.cta_group::%5.kind::f16 [%0], %1, %2, %3, p;\n}\n" ::"r"(d_tmem),
               "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(static_cast<uint32_t>(acc)),
               "n"(static_cast<int>(G))
               : "memory");
}

// A from TMEM (M lanes x 16 bf16 packed two per 32-bit column: 8 columns), B from smem.
// PTX: tcgen05.mma.cta_group.kind [d-tmem], [a-tmem], b-desc, idesc{, ...}, enable-input-d;
// Instance: tcgen05.mma.cta_group::1.kind::f16 [%r1], [%r2], %rd1, %r3, p;
template <CtaGroup G = CtaGroup::k1>
__device__ __forceinline__ void mma_f16_ts(uint32_t d_tmem, uint32_t a_tmem, uint64_t b_desc,
                                           uint32_t idesc, Accumulate acc) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
               "tcgen05.mma.cta_group::%5.kind::f16 [%0], [%1], %2, %3, p;\n}\n" ::"r"(d_tmem),
               "r"(a_tmem), "l"(b_desc), "r"(idesc), "r"(static_cast<uint32_t>(acc)),
               "n"(static_cast<int>(G))
               : "memory");
}

// ---- completion ----------------------------------------------------------------------------

// One arrival on `bar` (this CTA's barrier, or any cluster address from mapa_shared) when all
// earlier async tcgen05 ops of this thread completed. Issue from the MMA-issuing thread.
// PTX: tcgen05.commit.cta_group.completion_mechanism{.shared::cluster}{.multicast}.b64 [mbar]
//          {, ctaMask};   .completion_mechanism = .mbarrier::arrive::one;
//   .multicast = .multicast::cluster
// Instance: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r1];
template <CtaGroup G = CtaGroup::k1> __device__ __forceinline__ void tcgen05_commit(uint32_t bar) {
  asm volatile(
      "tcgen05.commit.cta_group::%1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n" ::"r"(bar),
      "n"(static_cast<int>(G))
      : "memory");
}

// The arrival goes to the barrier at offset `bar` in every CTA whose %cluster_ctarank bit is set
// in `cta_mask`: for a CTA pair whose leader has rank r, cta_mask = 0b11 << r, so both CTAs
// learn that the pair's MMAs (which read both CTAs' smem and write both TMEMs) are done.
// Instance: tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster
//           .b64 [%r1], %rs1;
template <CtaGroup G = CtaGroup::k2>
__device__ __forceinline__ void tcgen05_commit_multicast(uint32_t bar, uint16_t cta_mask) {
  asm volatile("tcgen05.commit.cta_group::%2.mbarrier::arrive::one.shared::cluster.multicast::"
               "cluster.b64 [%0], %1;\n" ::"r"(bar),
               "h"(cta_mask), "n"(static_cast<int>(G))
               : "memory");
}

// ---- fences --------------------------------------------------------------------------------

// Before a thread sync (bar.sync, mbarrier arrive, cluster barrier) that publishes tcgen05 work.
// PTX: tcgen05.fence::before_thread_sync;   Instance: tcgen05.fence::before_thread_sync;
__device__ __forceinline__ void tcgen05_fence_before_thread_sync() {
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
}

// After the matching wait, before the next tcgen05 op (mma after TMA data, ld after commit).
// PTX: tcgen05.fence::after_thread_sync;   Instance: tcgen05.fence::after_thread_sync;
__device__ __forceinline__ void tcgen05_fence_after_thread_sync() {
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
}

// ---- TMEM <-> registers --------------------------------------------------------------------
// Shapes: lanes x bits per .x1 and registers per thread per .x1 (.xN multiplies both the
// columns covered and the registers; this pack wraps up to 32 registers per call, issue several
// calls and one wait for more). taddr's lane must lie in the warp's quarter; the 16-lane shapes
// cover lanes [lane, lane + 16). Register r of lane l holds (TMEM lane - taddr lane, column -
// taddr column) = (UNPROVEN: from the PTX ISA figures, no Blackwell GPU here):
//   32x32b  1 reg : (l, r)                                   32 lanes x N columns
//   16x64b  1 reg : (l/4 + 8*(l%2), (l/2)%2 + 2r)            16 lanes x 2N columns
//   16x128b 2 regs: (l/4 + 8*(r%2), l%4 + 4*(r/2))           16 lanes x 4N columns
//   16x256b 4 regs: (l/4 + 8*((r/2)%2), r%2 + 2*(l%4) + 8*(r/4))   16 lanes x 8N columns
// PTX: tcgen05.ld.sync.aligned.shape.num{.pack::16b}.b32 r, [taddr];
//      tcgen05.st.sync.aligned.shape.num{.unpack::16b}.b32 [taddr], r;
//   .shape = .32x32b | .16x64b | .16x128b | .16x256b | .16x32bx2;  .num = .x1 .. .x128
// Instance: tcgen05.ld.sync.aligned.32x32b.x8.b32 {%r1, ..., %r8}, [%r9];

enum class TmemShape : int { k32x32b, k16x64b, k16x128b, k16x256b };

__host__ __device__ constexpr int tmem_lanes(TmemShape s) {
  return s == TmemShape::k32x32b ? 32 : 16;
}
__host__ __device__ constexpr int tmem_bits(TmemShape s) {
  return s == TmemShape::k32x32b    ? 32
         : s == TmemShape::k16x64b  ? 64
         : s == TmemShape::k16x128b ? 128
                                    : 256;
}
// Registers per thread of one .x1: lanes * bits / (32 threads * 32 bits).
__host__ __device__ constexpr int tmem_regs_per_x1(TmemShape s) {
  return tmem_lanes(s) * tmem_bits(s) / 1024;
}

#define SM100_L1 "{%0}"
#define SM100_L2 "{%0, %1}"
#define SM100_L4 "{%0, %1, %2, %3}"
#define SM100_L8 "{%0, %1, %2, %3, %4, %5, %6, %7}"
#define SM100_L16 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}"
#define SM100_L32                                                                                  \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "    \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define SM100_O1(b) "=r"(r[b])
#define SM100_O2(b) SM100_O1(b), SM100_O1(b + 1)
#define SM100_O4(b) SM100_O2(b), SM100_O2(b + 2)
#define SM100_O8(b) SM100_O4(b), SM100_O4(b + 4)
#define SM100_O16(b) SM100_O8(b), SM100_O8(b + 8)
#define SM100_O32(b) SM100_O16(b), SM100_O16(b + 16)
#define SM100_I1(b) "r"(r[b])
#define SM100_I2(b) SM100_I1(b), SM100_I1(b + 1)
#define SM100_I4(b) SM100_I2(b), SM100_I2(b + 2)
#define SM100_I8(b) SM100_I4(b), SM100_I4(b + 4)
#define SM100_I16(b) SM100_I8(b), SM100_I8(b + 8)
#define SM100_I32(b) SM100_I16(b), SM100_I16(b + 16)
// Operands: the R registers are %0..%R-1, then taddr, lanes, bits, num.
#define SM100_TMEM_LD(R, T, A, B, N)                                                               \
  if constexpr (kRegs == R)                                                                        \
    asm volatile("tcgen05.ld.sync.aligned.%" A "x%" B "b.x%" N ".b32 " SM100_L##R ", [%" T "];\n"  \
                 : SM100_O##R(0)                                                                   \
                 : "r"(taddr), "n"(tmem_lanes(kShape)), "n"(tmem_bits(kShape)), "n"(kNum)          \
                 : "memory");
#define SM100_TMEM_ST(R, T, A, B, N)                                                               \
  if constexpr (kRegs == R)                                                                        \
    asm volatile("tcgen05.st.sync.aligned.%" A "x%" B "b.x%" N ".b32 [%" T "], " SM100_L##R        \
                 ";\n" ::SM100_I##R(0),                                                            \
                 "r"(taddr), "n"(tmem_lanes(kShape)), "n"(tmem_bits(kShape)), "n"(kNum)            \
                 : "memory");

// r[] <- TMEM at taddr, shape kShape repeated kNum times (.xkNum); whole warp. Asynchronous:
// call tmem_wait_ld(r) before reading r.
template <TmemShape kShape, int kNum>
__device__ __forceinline__ void tmem_ld(uint32_t taddr,
                                        uint32_t (&r)[tmem_regs_per_x1(kShape) * kNum]) {
  constexpr int kRegs = tmem_regs_per_x1(kShape) * kNum;
  static_assert(kNum >= 1 && (kNum & (kNum - 1)) == 0 && kRegs <= 32,
                "this pack wraps .x1.. with at most 32 registers per call");
  SM100_TMEM_LD(1, "1", "2", "3", "4")
  SM100_TMEM_LD(2, "2", "3", "4", "5")
  SM100_TMEM_LD(4, "4", "5", "6", "7")
  SM100_TMEM_LD(8, "8", "9", "10", "11")
  SM100_TMEM_LD(16, "16", "17", "18", "19")
  SM100_TMEM_LD(32, "32", "33", "34", "35")
}

// TMEM at taddr <- r[]; whole warp. Call tmem_wait_st() before an MMA or ld reads those cells.
// Instance: tcgen05.st.sync.aligned.32x32b.x8.b32 [%r9], {%r1, ..., %r8};
template <TmemShape kShape, int kNum>
__device__ __forceinline__ void tmem_st(uint32_t taddr,
                                        const uint32_t (&r)[tmem_regs_per_x1(kShape) * kNum]) {
  constexpr int kRegs = tmem_regs_per_x1(kShape) * kNum;
  static_assert(kNum >= 1 && (kNum & (kNum - 1)) == 0 && kRegs <= 32,
                "this pack wraps .x1.. with at most 32 registers per call");
  SM100_TMEM_ST(1, "1", "2", "3", "4")
  SM100_TMEM_ST(2, "2", "3", "4", "5")
  SM100_TMEM_ST(4, "4", "5", "6", "7")
  SM100_TMEM_ST(8, "8", "9", "10", "11")
  SM100_TMEM_ST(16, "16", "17", "18", "19")
  SM100_TMEM_ST(32, "32", "33", "34", "35")
}

#undef SM100_TMEM_LD
#undef SM100_TMEM_ST

// Waits for this thread's earlier tcgen05.ld, then pins r[] after the wait (an empty asm that
// reads and writes each register), so no use of r moves above the wait.
// PTX: tcgen05.wait::ld.sync.aligned;   Instance: tcgen05.wait::ld.sync.aligned;
template <int kRegs> __device__ __forceinline__ void tmem_wait_ld(uint32_t (&r)[kRegs]) {
  asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory");
#pragma unroll
  for (int i = 0; i < kRegs; ++i)
    asm volatile("" : "+r"(r[i])::"memory");
}

// PTX: tcgen05.wait::st.sync.aligned;   Instance: tcgen05.wait::st.sync.aligned;
__device__ __forceinline__ void tmem_wait_st() {
  asm volatile("tcgen05.wait::st.sync.aligned;\n" ::: "memory");
}

} // namespace sm100
