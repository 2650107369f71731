// TMA for sm_100a (PTX ISA 9.1 §9.7.9.27): the Hopper loads/stores repeated for this target (see
// base.cuh for why), plus the CTA-pair form `.cta_group::2` used with 2-CTA tcgen05.mma.
//
// Host: a CUtensorMap describes the global tensor and the box (rules as on Hopper,
// knowledge/sm90a/contract.md §6: rank 1..5, global address 16-B aligned, strides multiples of
// 16 B, box dims <= 256, box inner bytes <= swizzle span: bf16 SWIZZLE_128B boxes <= 64 wide).
// Pass it as `const __grid_constant__ CUtensorMap`. MMA-operand boxes: inner bytes EQUAL to the
// span, destination on the swizzle period (1024 B for 128B), TMA swizzle == descriptor swizzle.
// Device: coordinates are element indices, innermost first ({col, row}); out-of-bounds load
// elements are zero-filled and still counted: expect the FULL box bytes.
// CTA pairs: with `.cta_group::2` the mbarrier operand may be the peer CTA's barrier (its
// mapa_shared address), so both CTAs of a pair can signal the leader's "full" barrier, which
// then expects the bytes of both CTAs' boxes. Data always lands in the issuing CTA's smem
// (or, multicast, at the same offset in every CTA of cta_mask).
#pragma once

#include "knowledge/sm100a/base.cuh"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

namespace sm100 {

// cuTensorMapEncodeTiled resolved through the runtime (no -lcuda), or nullptr.
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encoder = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    const cudaError_t err = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                                             cudaEnableDefault, &found);
    return err == cudaSuccess && found == cudaDriverEntryPointSuccess
               ? reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn)
               : nullptr;
  }();
  return encoder;
}

// Row-major `rows` x `cols` matrix with row pitch `row_stride_bytes`; box `box_rows` x `box_cols`;
// out-of-bounds elements read as zero.
inline CUresult make_tensor_map_2d(CUtensorMap* map, CUtensorMapDataType dtype, const void* base,
                                   uint64_t rows, uint64_t cols, uint64_t row_stride_bytes,
                                   uint32_t box_rows, uint32_t box_cols,
                                   CUtensorMapSwizzle swizzle) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  if (encode == nullptr)
    return CUDA_ERROR_NOT_FOUND;
  const uint64_t dims[2] = {cols, rows};
  const uint64_t strides[1] = {row_stride_bytes};
  const uint32_t box[2] = {box_cols, box_rows};
  const uint32_t unit_strides[2] = {1, 1};
  return encode(map, dtype, 2, const_cast<void*>(base), dims, strides, box, unit_strides,
                CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

// PTX: cp.async.bulk.tensor.dim.dst.src{.load_mode}.completion_mechanism{.multicast}{.cta_group}
//          {.level::cache_hint} [dstMem], [tensorMap, tensorCoords], [mbar]{, ctaMask}{, policy};
//   .dst = .shared::cluster; .src = .global; .load_mode = .tile;
//   .completion_mechanism = .mbarrier::complete_tx::bytes; .multicast = .multicast::cluster;
//   .cta_group = .cta_group::1 | .cta_group::2
// Instance: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
//           [%r1], [%rd1, {%r3, %r4}], [%r2];
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, uint32_t bar,
                                            int32_t c0, int32_t c1) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%3, %4}], [%2];\n" ::"r"(dst),
               "l"(map), "r"(bar), "r"(c0), "r"(c1)
               : "memory");
}

// Box to this CTA's smem; completion on `bar`, which may be the pair leader's barrier
// (mapa_shared(bar, cta_pair_leader_rank())).
// Instance: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
//           .cta_group::2 [%r1], [%rd1, {%r3, %r4}], [%r2];
__device__ __forceinline__ void tma_load_2d_cta_pair(uint32_t dst, const CUtensorMap* map,
                                                     uint32_t bar, int32_t c0, int32_t c1) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               ".cta_group::2 [%0], [%1, {%3, %4}], [%2];\n" ::"r"(dst),
               "l"(map), "r"(bar), "r"(c0), "r"(c1)
               : "memory");
}

// Box to offset `dst` of every CTA whose %cluster_ctarank bit is set in `cta_mask`; each of them
// gets the complete_tx on its barrier at offset `bar` (every receiver expects these bytes).
// Instance: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
//           .multicast::cluster [%r1], [%rd1, {%r3, %r4}], [%r2], %rs1;
__device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const CUtensorMap* map,
                                                      uint32_t bar, int32_t c0, int32_t c1,
                                                      uint16_t cta_mask) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(dst),
               "l"(map), "r"(bar), "r"(c0), "r"(c1), "h"(cta_mask)
               : "memory");
}

// Multicast in a kernel using 2-CTA MMA: the complete_tx for each receiving pair goes to the
// barrier at offset `bar` in that pair's leader CTA (UNPROVEN reading of the PTX text).
// Instance: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
//           .multicast::cluster.cta_group::2 [%r1], [%rd1, {%r3, %r4}], [%r2], %rs1;
__device__ __forceinline__ void tma_load_2d_multicast_cta_pair(uint32_t dst, const CUtensorMap* map,
                                                               uint32_t bar, int32_t c0, int32_t c1,
                                                               uint16_t cta_mask) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               ".multicast::cluster.cta_group::2 [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(dst),
               "l"(map), "r"(bar), "r"(c0), "r"(c1), "h"(cta_mask)
               : "memory");
}

// Shared -> global; out-of-bounds elements are dropped. Writers: fence_proxy_async_shared_cta(),
// barrier, then one thread issues; bulk_commit_group(); bulk_wait_group_read<0>() before reuse.
// PTX: cp.async.bulk.tensor.dim.dst.src{.load_mode}.bulk_group{.level::cache_hint}
//          [tensorMap, tensorCoords], [srcMem]{, policy};   .dst = .global; .src = .shared::cta
// Instance: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd1, {%r2, %r3}], [%r1];
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, uint32_t src, int32_t c0,
                                             int32_t c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
          map),
      "r"(src), "r"(c0), "r"(c1)
      : "memory");
}

// PTX: cp.async.bulk.commit_group;   Instance: cp.async.bulk.commit_group;
__device__ __forceinline__ void bulk_commit_group() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

// At most kPending bulk groups of this thread still incomplete (writes visible).
// PTX: cp.async.bulk.wait_group{.read} N;   Instance: cp.async.bulk.wait_group 0;
template <int kPending> __device__ __forceinline__ void bulk_wait_group() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// Only the smem reads are done: the source may be overwritten.
// Instance: cp.async.bulk.wait_group.read 0;
template <int kPending> __device__ __forceinline__ void bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
}

// PTX: prefetch{.tensormap_space}.tensormap [a];   Instance: prefetch.tensormap [%rd1];
__device__ __forceinline__ void prefetch_tensormap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(map) : "memory");
}

} // namespace sm100
