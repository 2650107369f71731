// Instantiates every wrapper of knowledge/sm90a in kernels, so building this object for sm_90a
// proves each one assembles; check_ptxas.cmake reruns it with -Xptxas -v and rejects spills
// and ignored setmaxnreg. Nothing here is launched.
#include "knowledge/sm90a/ptx.cuh"

#include <cuda.h>

namespace {

using namespace sm90;

template <int N>
__device__ void all_wgmma(float* out, uint64_t da, uint64_t db, const uint32_t (&a)[4]) {
  float d[N / 2] = {};
  wgmma_fence();
  wgmma_bf16_ss<N>(d, da, db, ScaleD::kZero);
  wgmma_bf16_ss<N, Major::kMN, Major::kMN, -1, -1>(d, da, db, ScaleD::kAccumulate);
  wgmma_bf16_rs<N>(d, a, db, ScaleD::kAccumulate);
  wgmma_bf16_rs<N, Major::kMN, -1, 1>(d, a, db, ScaleD::kAccumulate);
  wgmma_commit_group();
  wgmma_wait_group<1>();
  wgmma_wait_group<0>();
  wgmma_fence_operand(d);
  for (int i = 0; i < N / 2; ++i)
    out[threadIdx.x * (N / 2) + i] = d[i];
}

__global__ void __launch_bounds__(128, 1) wgmma_kernel(float* out, const uint32_t* in) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const uint32_t base = smem_u32(smem);
  const Bf16Tile tile{Swizzle::k128B, Major::kK, 64, 64};
  const uint64_t da = tile.desc(base, 1);
  const uint64_t db = make_smem_desc(base + 8192, 16, 1024, Swizzle::k64B) ^
                      make_smem_desc(0, 0, 0, Swizzle::k32B) ^
                      make_smem_desc(0, 0, 0, Swizzle::kNone);
  const uint32_t a[4] = {in[0], in[1], in[2], in[3]};
  all_wgmma<32>(out, da, db, a);
  all_wgmma<64>(out, da, db, a);
  all_wgmma<128>(out, da, db, a);
  all_wgmma<192>(out, da, db, a);
  all_wgmma<256>(out, da, db, a);
}

__global__ void __launch_bounds__(128, 1)
    data_movement_kernel(const __grid_constant__ CUtensorMap map, uint32_t* out, const uint4* src) {
  __shared__ __align__(1024) unsigned char tile[8192];
  __shared__ __align__(8) uint64_t bar;
  const uint32_t b = smem_u32(&bar);
  const uint32_t t = smem_u32(tile);
  prefetch_tensormap(&map);
  fence_tensormap_acquire_gpu(&map);
  if (elect_one_sync()) {
    mbar_init(b, 1);
    fence_mbarrier_init_release_cluster();
    mbar_expect_tx(b, 16);
    mbar_arrive_expect_tx(b, 4096);
    tma_prefetch_2d(&map, 0, 0);
    tma_load_2d(t, &map, b, 0, 0);
    tma_load_3d(t, &map, b, 0, 0, 0);
    tma_load_2d_multicast(t, &map, b, 0, 0, 0x3);
    bulk_copy_g2s(t, src, 16, b);
  }
  out[0] = mbar_test_wait(b, 0) + mbar_try_wait(b, 0) + mbar_try_wait_cluster(b, 1) +
           mbar_wait_bounded(b, 0, 1000);
  mbar_wait(b, 0);
  mbar_arrive(b);
  mbar_arrive_cluster(mapa_shared(b, cluster_ctarank() ^ 1u));
  mbar_arrive_remote_release_slot(mapa_shared(b, cluster_ctarank() ^ 1u));
  fence_proxy_async_shared_cta();
  fence_proxy_async_global();
  fence_proxy_async();
  tma_store_2d(&map, t, 0, 0);
  tma_store_3d(&map, t, 0, 0, 0);
  tma_reduce_add_2d(&map, t, 0, 0);
  bulk_copy_s2g(out + 16, t, 16);
  bulk_commit_group();
  bulk_wait_group_read<0>();
  bulk_wait_group<0>();
  mbar_inval(b);
}

__global__ void __launch_bounds__(384, 1) warp_kernel(uint32_t* out) {
  __shared__ __align__(16) uint32_t words[256];
  if (warpgroup_index() == 0) {
    setmaxnreg_dec<40>();
  } else {
    setmaxnreg_inc<232>();
  }
  named_barrier_sync(1, 384);
  named_barrier_arrive(2, 64);
  const uint32_t addr = smem_u32(words) + lane_id() * 16;
  uint32_t r2[2];
  uint32_t r4[4];
  const uint32_t r1 = ldmatrix_x1(addr) + ldmatrix_x1<Transpose::kYes>(addr);
  ldmatrix_x2(r2, addr);
  ldmatrix_x2<Transpose::kYes>(r2, addr);
  ldmatrix_x4(r4, addr);
  ldmatrix_x4<Transpose::kYes>(r4, addr);
  stmatrix_x1(addr, r1);
  stmatrix_x1<Transpose::kYes>(addr, r1);
  stmatrix_x2(addr, r2);
  stmatrix_x2<Transpose::kYes>(addr, r2);
  stmatrix_x4(addr, r4);
  stmatrix_x4<Transpose::kYes>(addr, r4);
  cluster_arrive_relaxed();
  cluster_wait_acquire();
  const uint32_t peer = mapa_shared(smem_u32(words), cluster_ctarank() ^ 1u);
  st_shared_cluster_u32(peer, cluster_nctarank());
  cluster_sync();
  out[threadIdx.x] = ld_shared_cluster_u32(peer) + warp_index_in_warpgroup() +
                     thread_index_in_warpgroup() + static_cast<uint32_t>(global_timer_ns());
}

__global__ void math_kernel(float* out, uint32_t* packed) {
  const float x = out[threadIdx.x];
  out[threadIdx.x] = exp2_approx_ftz(x);
  packed[threadIdx.x] = pack_bf16x2(x, -x);
}

} // namespace

// Host-side map creation must compile too.
CUresult knowledge_compile_host_maps(CUtensorMap* map, const void* p) {
  const CUresult r2 = make_tensor_map_2d(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, p, 64, 64, 128, 64,
                                         64, CU_TENSOR_MAP_SWIZZLE_128B);
  const uint64_t dims[3] = {64, 64, 2};
  const uint64_t strides[2] = {256, 128};
  const uint32_t box[3] = {64, 64, 2};
  const CUresult r3 = make_tensor_map_3d(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, p, dims, strides,
                                         box, CU_TENSOR_MAP_SWIZZLE_128B);
  return r2 != CUDA_SUCCESS ? r2 : r3;
}

void* knowledge_compile_kernels[] = {
    reinterpret_cast<void*>(&wgmma_kernel), reinterpret_cast<void*>(&data_movement_kernel),
    reinterpret_cast<void*>(&warp_kernel), reinterpret_cast<void*>(&math_kernel)};
