#!/usr/bin/env python3
"""Latency of the primary problems' libraries called through PyTorch, timed exactly like
bench/reference_latency.cu times our references:
  per call: a 256 MiB memset (L2 flush, outside the window), then CUDA events around one call;
  per trial: 10 warm-up calls, 50 timed calls, median.
Calls (the original PTXBench references):
  gemm_n7168_k5120 (M=8192)      torch.matmul(A, B.T), bf16 (cuBLAS/cuBLASLt)
  mha_with_lse_d128[_causal]     torch.ops.aten._scaled_dot_product_cudnn_attention(
                                     Q, K, V, None, True, 0.0, is_causal, False)
  mha_bwd_d128[_causal]          torch.ops.aten._scaled_dot_product_cudnn_attention_backward on the
                                 cuDNN forward's O and LSE (the op autograd calls, without
                                 autograd's own work); --autograd-backward times
                                 torch.autograd.grad of F.scaled_dot_product_attention under
                                 sdpa_kernel(CUDNN_ATTENTION) instead, as the first run did
B=4, H=48, S=4096, D=128, bf16, N(0,1) inputs (backward: spiky, as the suite's blobs).

Usage:
  python3 bench/torch_reference_latency.py
      3 trials per problem, mean of the medians (one table row per problem).
  python3 bench/torch_reference_latency.py --interleave BUILD/reference_latency [--pairs N]
      ours and PyTorch's trials alternate on the same GPU: BUILD/reference_latency --serve runs
      our trial when asked, this process runs PyTorch's; N pairs per problem, the order inside a
      pair alternating (AB, BA, AB, ...) so slow drift hits both sides alike. Prints every
      pair's ratio ours/torch, the median ratio, and the cuDNN/cuBLAS files each process mapped.
"""
import argparse
import statistics
import subprocess

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

WARMUP, TIMED, TRIALS = 10, 50, 3
FLUSH = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
PROBLEMS = ["gemm_n7168_k5120", "mha_with_lse_d128", "mha_with_lse_d128_causal",
            "mha_bwd_d128", "mha_bwd_d128_causal"]
B, H, S, D = 4, 48, 4096, 128
FWD_FLOPS = 4 * B * H * S * S * D


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


def randn(*shape, spiky=False):
    x = torch.randn(*shape, device="cuda", dtype=torch.float32)
    if spiky:
        x += 10.0 * torch.randn_like(x) * (torch.rand_like(x) < 0.001)
    return x.to(torch.bfloat16)


AUTOGRAD_BACKWARD = False


def make_call(name):
    """(fn, flops) for one problem; the tensors live as long as fn."""
    if name == "gemm_n7168_k5120":
        m, n, k = 8192, 7168, 5120
        a, b = randn(m, k), randn(n, k)
        return (lambda: torch.matmul(a, b.T)), 2 * m * n * k
    causal = name.endswith("_causal")
    if name.startswith("mha_with_lse_"):
        q, kk, v = randn(B, H, S, D), randn(B, H, S, D), randn(B, H, S, D)
        fn = lambda: torch.ops.aten._scaled_dot_product_cudnn_attention(
            q, kk, v, None, True, 0.0, causal, False)
        return fn, FWD_FLOPS // (2 if causal else 1)
    flops = int(2.5 * FWD_FLOPS) // (2 if causal else 1)
    q, kk, v = (randn(B, H, S, D, spiky=True) for _ in range(3))
    d_o = randn(B, H, S, D, spiky=True)
    if AUTOGRAD_BACKWARD:
        q, kk, v = (t.requires_grad_() for t in (q, kk, v))
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            out = F.scaled_dot_product_attention(q, kk, v, is_causal=causal)
        return (lambda: torch.autograd.grad(out, (q, kk, v), d_o, retain_graph=True)), flops
    f = torch.ops.aten._scaled_dot_product_cudnn_attention(q, kk, v, None, True, 0.0, causal, False)
    fn = lambda: torch.ops.aten._scaled_dot_product_cudnn_attention_backward(
        d_o, q, kk, v, f[0], f[1], f[6], f[7], None, f[2], f[3], f[4], f[5], 0.0, causal)
    return fn, flops


def mapped_libraries():
    files = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if "libcudnn" in path or "libcublas" in path:
                files.add(path)
    return sorted(files)


def header():
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"cuDNN {torch.backends.cudnn.version()}, CUDA {torch.version.cuda}", flush=True)


def sequential():
    header()
    print("| problem | library | median per trial (ms) | mean of medians (ms) | TFLOP/s |")
    print("|---|---|---|---|---|")
    for name in PROBLEMS:
        fn, flops = make_call(name)
        medians = [trial_median(fn) for _ in range(TRIALS)]
        mean = sum(medians) / TRIALS
        print(f"| {name} | torch {torch.__version__} | "
              + " / ".join(f"{m:.4f}" for m in medians)
              + f" | {mean:.4f} | {flops / (mean * 1e-3) / 1e12:.0f} |", flush=True)
        del fn


class Ours:
    """reference_latency --serve: one trial of our library reference per request."""

    def __init__(self, binary):
        self.proc = subprocess.Popen([binary, "--serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)

    def ask(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def trial(self, name):
        self.ask(name)
        reply = self.proc.stdout.readline().split()
        if len(reply) != 2 or reply[0] != name:
            raise RuntimeError(f"reference_latency --serve answered {reply!r} to {name}")
        return float(reply[1])

    def libraries(self):
        self.ask("libs")
        lines = []
        for line in iter(self.proc.stdout.readline, ""):
            if line.strip() == "end":
                break
            lines.append(line.rstrip())
        return lines

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def interleaved(binary, pairs):
    header()
    ours = Ours(binary)
    print("| problem | pairs (ours ms / torch ms = ratio), in run order | median ours | "
          "median torch | median ratio | max |ratio-1| |")
    print("|---|---|---|---|---|---|")
    for name in PROBLEMS:
        fn, _ = make_call(name)
        ours.trial(name)  # builds our case (plan, buffers) and warms both sides once
        trial_median(fn)
        rows = []
        for p in range(pairs):
            if p % 2 == 0:
                a = ours.trial(name)
                b = trial_median(fn)
            else:
                b = trial_median(fn)
                a = ours.trial(name)
            rows.append((a, b, a / b))
        ratios = [r for _, _, r in rows]
        cells = ", ".join(f"{a:.4f}/{b:.4f}={r:.3f}" for a, b, r in rows)
        print(f"| {name} | {cells} | {statistics.median(a for a, _, _ in rows):.4f} | "
              f"{statistics.median(b for _, b, _ in rows):.4f} | {statistics.median(ratios):.4f} | "
              f"{max(abs(r - 1) for r in ratios):.4f} |", flush=True)
        del fn
        torch.cuda.empty_cache()
    print("ours (reference_latency):")
    for line in ours.libraries():
        print("  " + line)
    ours.close()
    print("torch (this process):")
    for path in mapped_libraries():
        print("  mapped " + path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--interleave", metavar="REFERENCE_LATENCY")
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--autograd-backward", action="store_true")
    args = parser.parse_args()
    global AUTOGRAD_BACKWARD
    AUTOGRAD_BACKWARD = args.autograd_backward
    print("backward through " + ("autograd" if AUTOGRAD_BACKWARD
                                 else "aten._scaled_dot_product_cudnn_attention_backward"))
    torch.manual_seed(20260427)
    if args.interleave:
        interleaved(args.interleave, args.pairs)
    else:
        sequential()


if __name__ == "__main__":
    main()
