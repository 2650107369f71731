// Instantiates every wrapper of knowledge/sm100a in kernels, so building this object for sm_100a
// proves each one assembles (cta_group::1 and ::2 in separate kernels: ptxas rejects a mix).
// check_ptxas.cmake reruns it with -Xptxas -v and rejects spills and ignored setmaxnreg.
// Nothing here is launched: there is no Blackwell GPU in this project.
#include "knowledge/sm100a/ptx.cuh"

#include <cuda.h>

namespace {

using namespace sm100;

template <TmemShape kShape, int kNum> __device__ uint32_t tmem_round_trip(uint32_t taddr) {
  uint32_t r[tmem_regs_per_x1(kShape) * kNum];
  tmem_ld<kShape, kNum>(taddr, r);
  tmem_wait_ld(r);
  tmem_st<kShape, kNum>(taddr, r);
  tmem_wait_st();
  return r[0];
}

template <TmemShape kShape> __device__ uint32_t all_counts(uint32_t taddr) {
  constexpr int kMax = 32 / tmem_regs_per_x1(kShape);
  uint32_t sum = tmem_round_trip<kShape, 1>(taddr) + tmem_round_trip<kShape, kMax>(taddr);
  if constexpr (kMax >= 2)
    sum += tmem_round_trip<kShape, 2>(taddr);
  if constexpr (kMax >= 4)
    sum += tmem_round_trip<kShape, 4>(taddr);
  if constexpr (kMax >= 16)
    sum += tmem_round_trip<kShape, 8>(taddr) + tmem_round_trip<kShape, 16>(taddr);
  return sum;
}

__global__ void __launch_bounds__(256, 1)
    tcgen05_cta1_kernel(const __grid_constant__ CUtensorMap map, uint32_t* out) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ __align__(8) uint64_t bar;
  __shared__ uint32_t slot;
  const uint32_t b = smem_u32(&bar);
  const uint32_t tile = smem_u32(smem);
  if (warp_index() == 0) {
    tmem_alloc<256>(smem_u32(&slot));
    tmem_relinquish_alloc_permit();
  }
  if (threadIdx.x == 0) {
    mbar_init(b, 1);
    fence_mbarrier_init_release_cluster();
  }
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  const uint32_t d = slot;
  if (warp_index() == 1 && elect_one_sync()) {
    prefetch_tensormap(&map);
    mbar_arrive_expect_tx(b, 32768);
    tma_load_2d(tile, &map, b, 0, 0);
    tma_load_2d_multicast(tile + 16384, &map, b, 64, 0, 0x1);
  }
  mbar_wait(b, 0);
  tcgen05_fence_after_thread_sync();
  if (threadIdx.x == 0) {
    const UmmaBf16Tile a{UmmaSwizzle::k128B, Major::kK, 128, 64};
    const UmmaBf16Tile bt{UmmaSwizzle::k64B, Major::kMN, 128, 64};
    constexpr uint32_t kIdesc = make_idesc_f16(128, 128, Major::kK, Major::kMN);
    static_assert(valid_f16_shape(CtaGroup::k1, 128, 128));
    for (uint32_t k = 0; k < 4; ++k)
      mma_f16_ss(d, a.desc(tile, k), bt.desc(tile + 16384, k), kIdesc,
                 k == 0 ? Accumulate::kOverwrite : Accumulate::kAccumulate);
    mma_f16_ts(d + 128, d,
               make_umma_desc(tile, 128, 1024, UmmaSwizzle::k32B) ^
                   make_umma_desc(0, 0, 0, UmmaSwizzle::kNone) ^
                   make_umma_desc(0, 0, 0, UmmaSwizzle::k128BBase32B),
               make_idesc_f16(64, 64, Major::kK, Major::kK, F16Type::kF16, AccType::kF16),
               Accumulate::kAccumulate);
    tcgen05_commit(b);
  }
  mbar_wait(b, 1);
  tcgen05_fence_after_thread_sync();
  const uint32_t taddr = d + tmem_lane_offset(tmem_warp_lane_base(warp_index()));
  uint32_t sum = all_counts<TmemShape::k32x32b>(taddr) + all_counts<TmemShape::k16x64b>(taddr) +
                 all_counts<TmemShape::k16x128b>(taddr) + all_counts<TmemShape::k16x256b>(taddr);
  fence_proxy_async_shared_cta();
  named_barrier_sync(1, 256);
  if (threadIdx.x == 0) {
    tma_store_2d(&map, tile, 0, 0);
    bulk_commit_group();
    bulk_wait_group_read<0>();
    bulk_wait_group<0>();
  }
  named_barrier_arrive(2, 64);
  out[threadIdx.x] = sum + tmem_addr(1, 2);
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  if (warp_index() == 0)
    tmem_dealloc<256>(d);
}

__global__ void __launch_bounds__(256, 1) __cluster_dims__(2, 1, 1)
    tcgen05_cta2_kernel(const __grid_constant__ CUtensorMap map, uint32_t* out) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ __align__(8) uint64_t bar;
  __shared__ uint32_t slot;
  const uint32_t b = smem_u32(&bar);
  const uint32_t tile = smem_u32(smem);
  if (warp_index() < 4) {
    setmaxnreg_dec<40>();
  } else {
    setmaxnreg_inc<232>();
  }
  if (warp_index() == 0) {
    tmem_alloc<512, CtaGroup::k2>(smem_u32(&slot));
    tmem_relinquish_alloc_permit<CtaGroup::k2>();
  }
  if (threadIdx.x == 0) {
    mbar_init(b, 1);
    fence_mbarrier_init_release_cluster();
  }
  tcgen05_fence_before_thread_sync();
  cluster_sync();
  tcgen05_fence_after_thread_sync();
  const uint32_t d = slot;
  const uint32_t leader_bar = mapa_shared(b, cta_pair_leader_rank());
  if (threadIdx.x == 0) {
    if (is_cta_pair_leader())
      mbar_arrive_expect_tx(b, 65536);
    tma_load_2d_cta_pair(tile, &map, leader_bar, 0, 0);
    tma_load_2d_multicast_cta_pair(tile + 16384, &map, leader_bar, 64, 0, 0x3);
  }
  if (is_cta_pair_leader() && threadIdx.x == 0) {
    mbar_wait_cluster(b, 0);
    tcgen05_fence_after_thread_sync();
    static_assert(valid_f16_shape(CtaGroup::k2, 256, 256));
    const UmmaBf16Tile t{UmmaSwizzle::k128B, Major::kK, 128, 64};
    mma_f16_ss<CtaGroup::k2>(d, t.desc(tile, 0), t.desc(tile + 16384, 0),
                             make_idesc_f16(256, 256, Major::kK, Major::kK),
                             Accumulate::kOverwrite);
    mma_f16_ts<CtaGroup::k2>(d + 256, d, t.desc(tile + 16384, 1),
                             make_idesc_f16(256, 256, Major::kK, Major::kK),
                             Accumulate::kAccumulate);
    tcgen05_commit<CtaGroup::k2>(b);
    tcgen05_commit_multicast(b, static_cast<uint16_t>(0x3u << cta_pair_leader_rank()));
  }
  if (mbar_try_wait(b, 1))
    mbar_arrive_cluster(leader_bar);
  mbar_arrive_remote_release_slot(leader_bar);
  mbar_arrive(b);
  tcgen05_fence_before_thread_sync();
  cluster_sync();
  tcgen05_fence_after_thread_sync();
  out[threadIdx.x] = d;
  if (warp_index() == 0)
    tmem_dealloc<512, CtaGroup::k2>(d);
}

__global__ void math_kernel(float* out, uint32_t* packed) {
  const float x = out[threadIdx.x];
  out[threadIdx.x] = exp2_approx_ftz(x);
  packed[threadIdx.x] = pack_bf16x2(x, -x);
}

} // namespace

// Host-side map creation must compile too.
CUresult knowledge_sm100a_host_map(CUtensorMap* map, const void* p) {
  return make_tensor_map_2d(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, p, 128, 128, 256, 128, 64,
                            CU_TENSOR_MAP_SWIZZLE_128B);
}

void* knowledge_sm100a_kernels[] = {reinterpret_cast<void*>(&tcgen05_cta1_kernel),
                                    reinterpret_cast<void*>(&tcgen05_cta2_kernel),
                                    reinterpret_cast<void*>(&math_kernel)};
