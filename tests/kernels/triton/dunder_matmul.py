# Bad Triton candidate (issue 29): torch's matmul reached through the operator's method
# (`A.__matmul__(B.T)`, which is `A @ B.T` without the `@`), its product copied into C by a
# Triton kernel. Expected: COMPILE_ERROR, category banned_library (the gate's banned_method on
# the `__matmul__` line); with the gate bypassed, RUNTIME_ERROR, rule foreign_kernel, cuBLAS's
# kernel named in the message.
import triton
import triton.language as tl


@triton.jit
def copy_into(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def run(A, B, C, M):
    product = A.__matmul__(B.T)
    n = M * 7168
    copy_into[(triton.cdiv(n, 1024),)](product, C, n, BLOCK=1024)
