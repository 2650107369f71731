# Bad Triton candidate (issue 29): torch's matmul reached through an alias of the module
# (`t = torch`), its product copied into C by a Triton kernel. Expected: COMPILE_ERROR, category
# banned_library (the gate follows the alias: torch_alias and torch_call on the `t` lines); with
# the gate bypassed, RUNTIME_ERROR, rule foreign_kernel, cuBLAS's kernel named in the message.
import torch
import triton
import triton.language as tl


@triton.jit
def copy_into(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def run(A, B, C, M):
    t = torch
    product = t.matmul(A, B.T)
    n = M * 7168
    copy_into[(triton.cdiv(n, 1024),)](product, C, n, BLOCK=1024)
