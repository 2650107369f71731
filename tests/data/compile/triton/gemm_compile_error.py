# Passes the gate, but its kernel does not compile: tl.dot of a (64, 32) by a (64, 32) block has
# mismatched inner dimensions, which Triton reports at the tl.dot line (line 17).
import triton
import triton.language as tl


@triton.jit
def gemm_bad(a_ptr, b_ptr, c_ptr, M, N: tl.constexpr, K: tl.constexpr,
             BLOCK: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    rn = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + rn[:, None] * K + (k + rk)[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.bfloat16))


def run(A, B, C, M):
    grid = (triton.cdiv(M, 64), triton.cdiv(7168, 64))
    gemm_bad[grid](A, B, C, M, 7168, 5120, BLOCK=64, BLOCK_K=32)
