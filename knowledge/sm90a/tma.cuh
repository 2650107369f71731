// Tensor Memory Accelerator (TMA) and bulk copies (PTX ISA 9.1 §9.7.9.25-27).
//
// Host: a CUtensorMap (128 B, 64-B aligned) describes a global tensor and a box. Pass it to the
// kernel as `const __grid_constant__ CUtensorMap` (or __constant__; a map in global memory needs
// fence_tensormap_acquire_gpu before first use). Encoding rules (cuda.h, cuTensorMapEncodeTiled):
//   rank 1..5; global address 16-B aligned; dims[i] in [1, 2^32]; strides (bytes, dims 1..rank-1,
//   dim 0 is contiguous) multiples of 16 and < 2^40; box[i] in [1, 256]; box[0] * elem_bytes a
//   multiple of 16; with a swizzle, box[0] * elem_bytes <= span (32/64/128 B): bf16 boxes with
//   SWIZZLE_128B are at most 64 elements wide (wider tiles: several boxes or a 3-D map).
//   oobFill: CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE (= 0) fills out-of-bounds elements with ZERO;
//   NAN_REQUEST_ZERO_FMA (= 1) fills NaN.
// Device: coordinates are signed element indices, innermost dimension first ({col, row} for a
// row-major matrix) and may be negative or past the end: out-of-bounds elements of a load are
// filled (and still counted in complete_tx: expect the FULL box bytes), out-of-bounds elements
// of a store or reduce are not written. The box lands in shared memory densely, innermost
// dimension fastest, swizzled by the map's swizzle mode on absolute shared addresses
// (dst aligned to 128 B; to the swizzle period, 1024 B for 128B, for MMA operands).
// Loads complete on an mbarrier (complete_tx::bytes); stores and reduces complete in bulk
// groups: bulk_commit_group() then bulk_wait_group_read<0>() before the smem source is reused.
// A store/reduce reads smem through the async proxy: fence_proxy_async_shared_cta() in every
// writing thread, then a barrier, then one thread issues it.
#pragma once

#include "knowledge/sm90a/base.cuh"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

namespace sm90 {

// cuTensorMapEncodeTiled resolved from the driver through the runtime (no -lcuda), or nullptr.
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

// Tiled map of `rank` dims: dims/box innermost first, strides_bytes[i] = stride of dim i+1.
inline CUresult make_tensor_map(CUtensorMap* map, CUtensorMapDataType dtype, uint32_t rank,
                                const void* base, const uint64_t* dims,
                                const uint64_t* strides_bytes, const uint32_t* box,
                                CUtensorMapSwizzle swizzle,
                                CUtensorMapFloatOOBfill oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  if (encode == nullptr)
    return CUDA_ERROR_NOT_FOUND;
  const uint32_t unit_strides[5] = {1, 1, 1, 1, 1};
  return encode(map, dtype, rank, const_cast<void*>(base), dims, strides_bytes, box, unit_strides,
                CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, oob);
}

// Row-major matrix `rows` x `cols` with row pitch `row_stride_bytes`; box `box_rows` x `box_cols`.
inline CUresult
make_tensor_map_2d(CUtensorMap* map, CUtensorMapDataType dtype, const void* base, uint64_t rows,
                   uint64_t cols, uint64_t row_stride_bytes, uint32_t box_rows, uint32_t box_cols,
                   CUtensorMapSwizzle swizzle,
                   CUtensorMapFloatOOBfill oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) {
  const uint64_t dims[2] = {cols, rows};
  const uint64_t strides[1] = {row_stride_bytes};
  const uint32_t box[2] = {box_cols, box_rows};
  return make_tensor_map(map, dtype, 2, base, dims, strides, box, swizzle, oob);
}

// 3-D map: dims {d0, d1, d2} innermost first, strides of d1 and d2 in bytes.
inline CUresult make_tensor_map_3d(CUtensorMap* map, CUtensorMapDataType dtype, const void* base,
                                   const uint64_t (&dims)[3], const uint64_t (&strides_bytes)[2],
                                   const uint32_t (&box)[3], CUtensorMapSwizzle swizzle) {
  return make_tensor_map(map, dtype, 3, base, dims, strides_bytes, box, swizzle);
}

// PTX: cp.async.bulk.tensor.dim.dst.src{.load_mode}.completion_mechanism{.multicast}
//          {.level::cache_hint} [dstMem], [tensorMap, tensorCoords], [mbar]{, ctaMask}{, policy};
//   .dst = .shared::cluster; .src = .global; .load_mode = .tile;
//   .completion_mechanism = .mbarrier::complete_tx::bytes; .multicast = .multicast::cluster
// Instance: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
//           [%r1], [%rd1, {%r3, %r4}], [%r2];
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, uint32_t bar,
                                            int32_t c0, int32_t c1) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%3, %4}], [%2];\n" ::"r"(dst),
               "l"(map), "r"(bar), "r"(c0), "r"(c1)
               : "memory");
}

// Instance: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
//           [%r1], [%rd1, {%r3, %r4, %r5}], [%r2];
__device__ __forceinline__ void tma_load_3d(uint32_t dst, const CUtensorMap* map, uint32_t bar,
                                            int32_t c0, int32_t c1, int32_t c2) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(dst),
               "l"(map), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}

// Multicast: the box lands at offset `dst` in every CTA whose %cluster_ctarank bit is set in
// `cta_mask`, and each of them gets the complete_tx on its own barrier at offset `bar`; so every
// destination CTA expects these bytes on its barrier.
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

// Instance: cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%rd1, {%r2, %r3, %r4}],
// [%r1];
__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, uint32_t src, int32_t c0,
                                             int32_t c1, int32_t c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::
          "l"(map),
      "r"(src), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// Element-wise global += box (in-bounds elements only).
// PTX: cp.reduce.async.bulk.tensor.dim.dst.src.redOp{.load_mode}.bulk_group{.level::cache_hint}
//          [tensorMap, tensorCoords], [srcMem]{, policy};
//   .redOp = .add | .min | .max | .inc | .dec | .and | .or | .xor
// Instance: cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group
//           [%rd1, {%r2, %r3}], [%r1];
__device__ __forceinline__ void tma_reduce_add_2d(const CUtensorMap* map, uint32_t src, int32_t c0,
                                                  int32_t c1) {
  asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, {%2, "
               "%3}], [%1];\n" ::"l"(map),
               "r"(src), "r"(c0), "r"(c1)
               : "memory");
}

// Warm L2 with a box; no shared memory, no completion.
// PTX: cp.async.bulk.prefetch.tensor.dim.L2.src{.load_mode}{.level::cache_hint}
//          [tensorMap, tensorCoords]{, policy};
// Instance: cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%rd1, {%r1, %r2}];
__device__ __forceinline__ void tma_prefetch_2d(const CUtensorMap* map, int32_t c0, int32_t c1) {
  asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];\n" ::"l"(map),
               "r"(c0), "r"(c1)
               : "memory");
}

// Fetch the tensor map itself into the descriptor cache.
// PTX: prefetch{.tensormap_space}.tensormap [a];   Instance: prefetch.tensormap [%rd1];
__device__ __forceinline__ void prefetch_tensormap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(map) : "memory");
}

// Non-tensor bulk copy global -> shared, `bytes` a multiple of 16, both addresses 16-B aligned;
// completes `bytes` transactions on `bar`.
// PTX: cp.async.bulk.dst.src.completion_mechanism{.multicast}{.level::cache_hint}
//          [dstMem], [srcMem], size, [mbar]{, ctaMask}{, policy};
// Instance: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 4096,
// [%r2];
__device__ __forceinline__ void bulk_copy_g2s(uint32_t dst, const void* src, uint32_t bytes,
                                              uint32_t bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::
          "r"(dst),
      "l"(src), "r"(bytes), "r"(bar)
      : "memory");
}

// Non-tensor bulk copy shared -> global in the current bulk group.
// PTX: cp.async.bulk.global.shared::cta.bulk_group{.level::cache_hint} [dstMem], [srcMem], size{,
// policy}; Instance: cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r1], 4096;
__device__ __forceinline__ void bulk_copy_s2g(void* dst, uint32_t src, uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(dst), "r"(src),
               "r"(bytes)
               : "memory");
}

// Close the bulk group of this thread's earlier stores/reduces/s2g copies.
// PTX: cp.async.bulk.commit_group;   Instance: cp.async.bulk.commit_group;
__device__ __forceinline__ void bulk_commit_group() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

// Wait until at most kPending bulk groups of this thread are incomplete (writes visible).
// PTX: cp.async.bulk.wait_group{.read} N;   Instance: cp.async.bulk.wait_group 0;
template <int kPending> __device__ __forceinline__ void bulk_wait_group() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// Only the shared-memory reads must be done: the source may be overwritten.
// Instance: cp.async.bulk.wait_group.read 0;
template <int kPending> __device__ __forceinline__ void bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
}

} // namespace sm90
