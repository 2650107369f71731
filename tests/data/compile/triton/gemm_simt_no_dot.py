# A Triton GEMM for gemm_n7168_k5120 without tl.dot: every product is a broadcast multiply and a
# reduction on the CUDA cores, so no tensor-core (GMMA) or TMA instruction is built.
import triton
import triton.language as tl


@triton.jit
def gemm_simt(a_ptr, b_ptr, c_ptr, M, N: tl.constexpr, K: tl.constexpr,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=rm[:, None] < M, other=0.0)
        b = tl.load(b_ptr + rn[:, None] * K + (k + rk)[None, :])
        acc += tl.sum(a.to(tl.float32)[:, None, :] * b.to(tl.float32)[None, :, :], axis=2)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.bfloat16), mask=rm[:, None] < M)


def run(A, B, C, M):
    grid = (triton.cdiv(M, 16), triton.cdiv(7168, 16))
    gemm_simt[grid](A, B, C, M, 7168, 5120, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)
