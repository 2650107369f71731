# Passes the gate (torch.cuda.* is allowed host code), but `run` times itself with CUDA events,
# which the ahead-of-time specialisation without a GPU does not model: the SASS report needs a GPU.
import torch
import triton
import triton.language as tl


@triton.jit
def fill_kernel(c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(c_ptr + offs, tl.zeros((BLOCK,), dtype=tl.bfloat16), mask=offs < n)


def run(A, B, C, M):
    start = torch.cuda.Event(enable_timing=True)
    start.record()
    fill_kernel[(triton.cdiv(M * 7168, 1024),)](C, M * 7168, BLOCK=1024)
