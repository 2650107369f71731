# Bad Triton candidate (issue 19): an autotuned kernel whose configuration's pre-hook never
# returns, so the first call (the warm-up in `load`) hangs in autotuning. Expected: TIMEOUT with
# "Triton JIT or autotuning did not finish".
import time

import triton
import triton.language as tl


def _stall(*args, **kwargs):
    while True:
        time.sleep(1)


@triton.autotune(configs=[triton.Config({"BLOCK": 128}, pre_hook=_stall)], key=["M"])
@triton.jit
def fill(c_ptr, M, N: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(c_ptr + offsets, 0.0, mask=offsets < M * N)


def run(A, B, C, M):
    fill[(triton.cdiv(M * 7168, 128),)](C, M, 7168)
