# Expert Triton attention forward for mha_with_lse_d128 on sm_90a: O = softmax(Q Kᵀ / sqrt(D)) V
# and LSE = natural-log logsumexp of the scaled logits, layout [B, H, S, D], bf16 in and out,
# fp32 softmax. Written with the Triton pack (knowledge/triton/attention_forward.md):
# - grid (cdiv(S, BLOCK_M), B·H): each program owns BLOCK_M query rows of one head;
# - Q, K, V and O through 3-D tensor descriptors [B·H, S, D] (TMA): a block never crosses into
#   the next head, rows past S are zero-filled on load and clipped on store;
# - online softmax in the exp2 domain (scale · log2 e folded into one factor), running max and
#   sum in fp32, both matrix products with tl.dot (wgmma on Hopper);
# - keys past S (only when S is not a multiple of BLOCK_N) are masked in the last block only.
import torch
import triton
import triton.language as tl

HEAD_DIM = 128
LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453


@triton.jit
def attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, S, qk_scale,
                    BH: tl.constexpr, D: tl.constexpr, BLOCK_M: tl.constexpr,
                    BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[BH, S, D], strides=[S * D, D, 1],
                                       block_shape=[1, BLOCK_M, D])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[BH, S, D], strides=[S * D, D, 1],
                                       block_shape=[1, BLOCK_N, D])
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[BH, S, D], strides=[S * D, D, 1],
                                       block_shape=[1, BLOCK_N, D])
    o_desc = tl.make_tensor_descriptor(o_ptr, shape=[BH, S, D], strides=[S * D, D, 1],
                                       block_shape=[1, BLOCK_M, D])
    start_m = pid_m * BLOCK_M
    q = q_desc.load([bh, start_m, 0]).reshape(BLOCK_M, D)
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, D], dtype=tl.float32)
    full_end = (S // BLOCK_N) * BLOCK_N
    for start_n in range(0, full_end, BLOCK_N):
        k = k_desc.load([bh, start_n, 0]).reshape(BLOCK_N, D)
        v = v_desc.load([bh, start_n, 0]).reshape(BLOCK_N, D)
        s = tl.dot(q, k.T) * qk_scale
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.bfloat16), v)
        m_i = m_new
    if full_end < S:
        k = k_desc.load([bh, full_end, 0]).reshape(BLOCK_N, D)
        v = v_desc.load([bh, full_end, 0]).reshape(BLOCK_N, D)
        offs_n = full_end + tl.arange(0, BLOCK_N)
        s = tl.where((offs_n < S)[None, :], tl.dot(q, k.T) * qk_scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.bfloat16), v)
        m_i = m_new
    o = acc / l_i[:, None]
    o_desc.store([bh, start_m, 0], o.to(tl.bfloat16).reshape(1, BLOCK_M, D))
    offs_m = start_m + tl.arange(0, BLOCK_M)
    lse = (m_i + tl.log2(l_i)) * 0.6931471805599453
    tl.store(lse_ptr + bh * S + offs_m, lse, mask=offs_m < S)


def _alloc(size, alignment, stream):
    return torch.empty(size, device="cuda", dtype=torch.int8)


def run(Q, K, V, O, LSE, S):
    triton.set_allocator(_alloc)
    batch, heads = Q.shape[0], Q.shape[1]
    BLOCK_M, BLOCK_N = 128, 64
    qk_scale = (1.0 / HEAD_DIM ** 0.5) * LOG2E
    grid = (triton.cdiv(S, BLOCK_M), batch * heads)
    attn_fwd_kernel[grid](Q, K, V, O, LSE, S, qk_scale, BH=batch * heads, D=HEAD_DIM,
                          BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=8, num_stages=3)
