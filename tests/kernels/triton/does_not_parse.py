# Bad Triton candidate (issue 19): a syntax error. Expected: COMPILE_ERROR from the gate.
import triton


def run(A, B, C, M)
    pass
