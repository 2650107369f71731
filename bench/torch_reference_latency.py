#!/usr/bin/env python3
"""Latency of the primary problems' libraries called through PyTorch, timed exactly like
bench/reference_latency.cu times our references:
  per call: a 256 MiB memset (L2 flush, outside the window), then CUDA events around one call;
  per trial: 10 warm-up calls, 50 timed calls, median; 3 trials; mean of the medians.
Calls (the original PTXBench references):
  gemm_n7168_k5120 (M=8192)      torch.matmul(A, B.T), bf16 (cuBLAS/cuBLASLt)
  mha_with_lse_d128[_causal]     torch.ops.aten._scaled_dot_product_cudnn_attention(
                                     Q, K, V, None, True, 0.0, is_causal, False)
  mha_bwd_d128[_causal]          torch.autograd.grad of F.scaled_dot_product_attention under
                                 sdpa_kernel(CUDNN_ATTENTION) w.r.t. Q, K, V with grad dO
B=4, H=48, S=4096, D=128, bf16, N(0,1) inputs (backward: spiky, as the suite's blobs).
Usage: python3 bench/torch_reference_latency.py
"""
import statistics

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

WARMUP, TIMED, TRIALS = 10, 50, 3
FLUSH = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")


def trial_median(fn):
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    times = []
    for i in range(WARMUP + TIMED):
        FLUSH.zero_()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        if i >= WARMUP:
            times.append(start.elapsed_time(stop))
    return statistics.median(times)


def measure(name, fn, flops):
    medians = [trial_median(fn) for _ in range(TRIALS)]
    mean = sum(medians) / TRIALS
    print(f"| {name} | torch {torch.__version__} | "
          + " / ".join(f"{m:.4f}" for m in medians)
          + f" | {mean:.4f} | {flops / (mean * 1e-3) / 1e12:.0f} |", flush=True)


def randn(*shape, spiky=False):
    x = torch.randn(*shape, device="cuda", dtype=torch.float32)
    if spiky:
        x += 10.0 * torch.randn_like(x) * (torch.rand_like(x) < 0.001)
    return x.to(torch.bfloat16)


def main():
    torch.manual_seed(20260427)
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"cuDNN {torch.backends.cudnn.version()}, CUDA {torch.version.cuda}")
    print("| problem | library | median per trial (ms) | mean of medians (ms) | TFLOP/s |")
    print("|---|---|---|---|---|")
    m, n, k = 8192, 7168, 5120
    a, b = randn(m, k), randn(n, k)
    measure("gemm_n7168_k5120", lambda: torch.matmul(a, b.T), 2 * m * n * k)
    del a, b
    bsz, h, s, d = 4, 48, 4096, 128
    fwd_flops = 4 * bsz * h * s * s * d
    q, kk, v = randn(bsz, h, s, d), randn(bsz, h, s, d), randn(bsz, h, s, d)
    for causal in (False, True):
        fn = lambda: torch.ops.aten._scaled_dot_product_cudnn_attention(
            q, kk, v, None, True, 0.0, causal, False)
        measure("mha_with_lse_d128" + ("_causal" if causal else ""), fn,
                fwd_flops // (2 if causal else 1))
    del q, kk, v
    q, kk, v = (randn(bsz, h, s, d, spiky=True).requires_grad_() for _ in range(3))
    d_o = randn(bsz, h, s, d, spiky=True)
    for causal in (False, True):
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            out = F.scaled_dot_product_attention(q, kk, v, is_causal=causal)
            fn = lambda: torch.autograd.grad(out, (q, kk, v), d_o, retain_graph=True)
            measure("mha_bwd_d128" + ("_causal" if causal else ""), fn,
                    int(2.5 * fwd_flops) // (2 if causal else 1))


if __name__ == "__main__":
    main()
