# Expert Triton causal attention forward for mha_with_lse_d128_causal on sm_90a: query row i
# attends keys 0..i; O = softmax(Q Kᵀ / sqrt(D) + causal mask) V and LSE, the natural-log
# logsumexp over the attended keys, layout [B, H, S, D], bf16 in and out, fp32 softmax. Written
# with the Triton pack (knowledge/triton/attention_forward.md):
# - grid (cdiv(S, BLOCK_M), B·H), query blocks scheduled longest first (the last block of rows
#   has the most keys) so the tail of the launch is short;
# - Q, K, V and O through 3-D tensor descriptors [B·H, S, D] (TMA): rows past S are zero-filled
#   on load and clipped on store;
# - two phases per program: the key blocks strictly below the diagonal without a mask, then the
#   BLOCK_M / BLOCK_N diagonal blocks with the causal mask (which also hides keys past S, since
#   they lie above the diagonal of every real row);
# - online softmax in the exp2 domain, running max and sum in fp32, tl.dot (wgmma on Hopper).
import torch
import triton
import triton.language as tl

HEAD_DIM = 128
LOG2E = 1.4426950408889634


@triton.jit
def _attend(acc, l_i, m_i, q, k_desc, v_desc, bh, lo, hi, offs_m, qk_scale,
            D: tl.constexpr, BLOCK_N: tl.constexpr, MASKED: tl.constexpr):
    for start_n in range(lo, hi, BLOCK_N):
        k = k_desc.load([bh, start_n, 0]).reshape(BLOCK_N, D)
        v = v_desc.load([bh, start_n, 0]).reshape(BLOCK_N, D)
        s = tl.dot(q, k.T) * qk_scale
        if MASKED:
            offs_n = start_n + tl.arange(0, BLOCK_N)
            s = tl.where(offs_m[:, None] >= offs_n[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.bfloat16), v)
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def causal_attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, S, qk_scale,
                           BH: tl.constexpr, D: tl.constexpr, BLOCK_M: tl.constexpr,
                           BLOCK_N: tl.constexpr):
    pid_m = tl.num_programs(0) - 1 - tl.program_id(0)
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
    offs_m = start_m + tl.arange(0, BLOCK_M)
    q = q_desc.load([bh, start_m, 0]).reshape(BLOCK_M, D)
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, D], dtype=tl.float32)
    acc, l_i, m_i = _attend(acc, l_i, m_i, q, k_desc, v_desc, bh, 0, start_m, offs_m, qk_scale,
                            D, BLOCK_N, False)
    acc, l_i, m_i = _attend(acc, l_i, m_i, q, k_desc, v_desc, bh, start_m, start_m + BLOCK_M,
                            offs_m, qk_scale, D, BLOCK_N, True)
    o = acc / l_i[:, None]
    o_desc.store([bh, start_m, 0], o.to(tl.bfloat16).reshape(1, BLOCK_M, D))
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
    causal_attn_fwd_kernel[grid](Q, K, V, O, LSE, S, qk_scale, BH=batch * heads, D=HEAD_DIM,
                                 BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=8, num_stages=3)
