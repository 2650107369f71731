// The wgmma+TMA test candidate, renamed so it links next to the SIMT one.
#define run sm90_wgmma_tma_gemm_run
#include "kernels/sm90_wgmma_tma_gemm.cu"
