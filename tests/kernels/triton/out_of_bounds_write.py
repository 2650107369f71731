# Bad Triton candidate (issue 19): the persistent TMA GEMM, correct, and then a second kernel
# that writes one element past the end of C (line marked below). The main pass cannot see it
# (the write lands in the allocation's slack); compute-sanitizer memcheck, run on the Triton
# child's single call, names it: RUNTIME_ERROR "Invalid __global__ write" in poke_past_end.
import torch
import triton
import triton.language as tl


@triton.jit
def gemm_persistent(a_ptr, b_ptr, c_ptr, M, N: tl.constexpr, K: tl.constexpr,
                    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                    GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    num_m = tl.cdiv(M, BM)
    num_n = tl.cdiv(N, BN)
    num_tiles = num_m * num_n
    for tile in range(tl.program_id(0), num_tiles, NUM_SMS):
        group = tile // (GROUP_M * num_n)
        first_m = group * GROUP_M
        size_m = tl.minimum(num_m - first_m, GROUP_M)
        pid_m = first_m + (tile % size_m)
        pid_n = (tile % (GROUP_M * num_n)) // size_m
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            a = a_desc.load([pid_m * BM, k])
            b = b_desc.load([pid_n * BN, k])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.bfloat16))


@triton.jit
def poke_past_end(c_ptr, n):
    tl.store(c_ptr + n, tl.zeros((), tl.bfloat16))  # out of bounds: one past the end of C


def _alloc(size, alignment, stream):
    return torch.empty(size, device="cuda", dtype=torch.int8)


def run(A, B, C, M):
    triton.set_allocator(_alloc)
    num_sms = torch.cuda.get_device_properties(A.device).multi_processor_count
    BM, BN, BK = 128, 128, 64
    tiles = triton.cdiv(M, BM) * triton.cdiv(7168, BN)
    grid = (min(num_sms, tiles),)
    gemm_persistent[grid](A, B, C, M, 7168, 5120, BM=BM, BN=BN, BK=BK, GROUP_M=8,
                          NUM_SMS=min(num_sms, tiles), num_warps=8, num_stages=4)
    poke_past_end[(1,)](C, C.numel())
