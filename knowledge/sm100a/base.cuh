// Blackwell (sm_100a) knowledge pack: the architecture guard and the shared-address helper every
// other header of the pack uses. Device code of this pack assembles only for the arch-specific
// target: build with -gencode arch=compute_100a,code=sm_100a (plain -arch=sm_100a adds a
// compute_100 pass that rejects tcgen05 and setmaxnreg).
//
// Why some wrappers repeat knowledge/sm90a: those headers #error unless __CUDA_ARCH_FEAT_SM90_ALL
// is defined, so no sm90a header can be included from an sm_100a build. The instructions both
// architectures share (mbarrier, fences, clusters, elect, setmaxnreg, TMA) are repeated here in
// namespace sm100 under the same function names, reduced to what a Blackwell kernel needs.
#pragma once

#include <cstdint>

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM100_ALL)
#error "knowledge/sm100a needs the sm_100a target: -gencode arch=compute_100a,code=sm_100a"
#endif

namespace sm100 {

// Offset of a generic pointer into this CTA's shared window: what every `.shared` operand,
// mbarrier address, TMEM-address slot and matrix descriptor takes.
// PTX: cvta.to.shared.u32 r, p;   Instance: cvta.to.shared.u32 %r1, %rd1;
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

} // namespace sm100
