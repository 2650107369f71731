// Warp-per-row building blocks of the naive attention references (naive_attention.cu,
// naive_gqa.cu). One warp owns one query row; lane l holds head-dim elements l, l+32, …
// (kChunks of them, D ≤ 32·kChunks) in fp32 registers. Dot products are reduced across the
// warp with xor shuffles, so every lane ends with the full sum and all lanes take the same
// branches. Softmax is the online (running max / running sum) form in fp32 with precise
// expf/logf; nothing here uses tensor cores.
#pragma once

#include <cmath>
#include <cstdint>
#include <cuda_bf16.h>

namespace ptxbench::reference::naive {

constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = 4;

__device__ inline float warp_sum(float value) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

// The warp's global index; whole warps share it, so early returns keep warps converged.
__device__ inline std::int64_t global_warp() {
  return (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
}

__device__ inline int lane() {
  return static_cast<int>(threadIdx.x % kWarp);
}

template <int kChunks> struct RowVec {
  float value[kChunks];

  __device__ void load(const __nv_bfloat16* row, int dim) {
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int d = lane() + c * kWarp;
      value[c] = d < dim ? __bfloat162float(row[d]) : 0.0f;
    }
  }
  __device__ void fill(float x) {
#pragma unroll
    for (int c = 0; c < kChunks; ++c)
      value[c] = x;
  }
  // Σ_d value[d]·row[d] over the whole warp.
  __device__ float dot(const __nv_bfloat16* row, int dim) const {
    float partial = 0.0f;
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int d = lane() + c * kWarp;
      if (d < dim)
        partial = fmaf(value[c], __bfloat162float(row[d]), partial);
    }
    return warp_sum(partial);
  }
  // value = value·keep + weight·row
  __device__ void scale_add(float keep, float weight, const __nv_bfloat16* row, int dim) {
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int d = lane() + c * kWarp;
      if (d < dim)
        value[c] = fmaf(weight, __bfloat162float(row[d]), value[c] * keep);
    }
  }
  __device__ void store(__nv_bfloat16* row, int dim, float factor) const {
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int d = lane() + c * kWarp;
      if (d < dim)
        row[d] = __float2bfloat16(value[c] * factor);
    }
  }
};

// Running softmax statistics of one row: max m and Σ exp(s − m).
struct OnlineSoftmax {
  float max = -INFINITY;
  float sum = 0.0f;

  // Adds score s; returns (rescale factor for the accumulator, weight of s).
  __device__ float2 add(float s) {
    const float next = fmaxf(max, s);
    const float keep = expf(max - next); // 0 on the first key (max = −inf)
    const float weight = expf(s - next);
    sum = sum * keep + weight;
    max = next;
    return make_float2(keep, weight);
  }
  __device__ float lse_natural() const { return max + logf(sum); }
};

// Attends one query row to `count` keys whose rows start at key_row(j) elements into k and v;
// leaves the unnormalised Σ p·V in acc and returns the statistics.
template <int kChunks, typename KeyRow>
__device__ OnlineSoftmax attend_row(const RowVec<kChunks>& q, const __nv_bfloat16* k,
                                    const __nv_bfloat16* v, std::int64_t count, KeyRow key_row,
                                    float scale, int dim, RowVec<kChunks>& acc) {
  OnlineSoftmax softmax;
  acc.fill(0.0f);
  for (std::int64_t j = 0; j < count; ++j) {
    const std::int64_t offset = key_row(j);
    const float2 step = softmax.add(q.dot(k + offset, dim) * scale);
    acc.scale_add(step.x, step.y, v + offset, dim);
  }
  return softmax;
}

// Runs `launch.template operator()<kChunks>()` with the smallest supported chunk count for
// head dimension `dim` (≤ 256).
template <typename Launch> cudaError_t dispatch_chunks(int dim, Launch&& launch) {
  if (dim <= 64)
    return launch.template operator()<2>();
  if (dim <= 96)
    return launch.template operator()<3>();
  if (dim <= 128)
    return launch.template operator()<4>();
  return launch.template operator()<8>();
}

inline unsigned warp_blocks(std::int64_t warps) {
  return static_cast<unsigned>((warps + kWarpsPerBlock - 1) / kWarpsPerBlock);
}

} // namespace ptxbench::reference::naive
