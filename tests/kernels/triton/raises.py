# Bad Triton candidate (issue 19): `run` raises in Python on every call. Expected: RUNTIME_ERROR
# in the warm-up call, the traceback in the child's log.
import triton
import triton.language as tl


@triton.jit
def never_launched(c_ptr):
    tl.store(c_ptr, 0.0)


def run(A, B, C, M):
    raise ValueError("the tile configuration does not fit M = %d" % M)
