#!/usr/bin/env python3
"""How much precision FlashInfer's attention tolerance lets a candidate drop (catalogue rows 16
and 17, docs/evaluation.md): mha_with_lse_d128 (B 4, H 48, S 4096, D 128, N(0,1) inputs as the
suite draws them), the reference in float32 as the problem's definition computes it, and
shortcuts a faster kernel could take, each judged by the suite's rule (every element within
atol + rtol * |reference|, atol = rtol = 1e-2). Needs torch with a GPU.

    python3 bench/tolerance_probe.py [--batches N]
"""
import argparse
import math

import torch

ATOL = RTOL = 1e-2


def attention(q, k, v):
    scale = 1.0 / math.sqrt(q.shape[-1])
    logits = torch.matmul(q.float(), k.float().transpose(-1, -2)) * scale
    lse = torch.logsumexp(logits, dim=-1)
    o = torch.matmul(torch.softmax(logits, dim=-1), v.float())
    return o, lse


def fp8(x):
    """Per-tensor e4m3 quantisation, dequantised (what an FP8 attention kernel computes with)."""
    scale = x.float().abs().amax() / 448.0
    return (x.float() / scale).to(torch.float8_e4m3fn).float() * scale


def matched(candidate, reference):
    ok = (candidate.float() - reference.float()).abs() <= ATOL + RTOL * reference.float().abs()
    return ok.float().mean().item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=4)
    args = parser.parse_args()
    torch.manual_seed(0)
    heads, seq, dim = 48, 4096, 128
    rows = {"O all zeros": [], "LSE all zeros": [], "O with Q, K, V in FP8 e4m3": [],
            "O with P and V in FP8 e4m3": [], "LSE rounded to bfloat16": []}
    magnitude = []
    for _ in range(args.batches):
        q, k, v = (torch.randn(heads, seq, dim, device="cuda").bfloat16() for _ in range(3))
        o, lse = attention(q, k, v)
        o_ref = o.bfloat16()
        magnitude.append((o.abs() < ATOL).float().mean().item())
        rows["O all zeros"].append(matched(torch.zeros_like(o_ref), o_ref))
        rows["LSE all zeros"].append(matched(torch.zeros_like(lse), lse))
        o8, _ = attention(fp8(q), fp8(k), fp8(v))
        rows["O with Q, K, V in FP8 e4m3"].append(matched(o8.bfloat16(), o_ref))
        scale = 1.0 / math.sqrt(dim)
        p = torch.softmax(torch.matmul(q.float(), k.float().transpose(-1, -2)) * scale, dim=-1)
        rows["O with P and V in FP8 e4m3"].append(matched(torch.matmul(fp8(p), fp8(v)).bfloat16(),
                                                          o_ref))
        rows["LSE rounded to bfloat16"].append(matched(lse.bfloat16(), lse))
    print(f"# tolerance probe: mha_with_lse_d128, {args.batches} batches, {torch.cuda.get_device_name()}")
    print(f"reference |O| < atol: {100 * sum(magnitude) / len(magnitude):.1f} % of elements")
    print("| shortcut | elements within tolerance (min over batches) | passes (ratio 1.0) |")
    print("|---|---|---|")
    for name, ratios in rows.items():
        print(f"| {name} | {100 * min(ratios):.4f} % | {'yes' if min(ratios) == 1.0 else 'no'} |")


if __name__ == "__main__":
    main()
