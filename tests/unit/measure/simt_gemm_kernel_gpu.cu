// The SIMT test candidate, renamed so it links next to the wgmma one.
#define run simt_gemm_run
#include "kernels/simt_gemm.cu"
