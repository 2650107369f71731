# Bad Triton candidate (issue 19): `run` without the variable axis M. Expected: COMPILE_ERROR
# (the gate's missing parameter; the child's load would say the same).
import triton
import triton.language as tl


@triton.jit
def copy(c_ptr):
    tl.store(c_ptr, 0.0)


def run(A, B, C):
    copy[(1,)](C)
