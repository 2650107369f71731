// Hopper (sm_90a) knowledge pack: the architecture guard and the shared-address helper every
// other header of the pack uses. Device code of this pack assembles only for the
// arch-specific target: build with -gencode arch=compute_90a,code=sm_90a (never plain
// -arch=sm_90a, whose extra compute_90 pass rejects wgmma and setmaxnreg).
#pragma once

#include <cstdint>

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "knowledge/sm90a needs the sm_90a target: -gencode arch=compute_90a,code=sm_90a"
#endif

namespace sm90 {

// Offset of a generic pointer into this CTA's shared window: what every `.shared` operand,
// mbarrier address and matrix descriptor takes. PTX: `cvta.to.shared.u32 r, p;`
// Instance: cvta.to.shared.u32 %r1, %rd1;
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

} // namespace sm90
