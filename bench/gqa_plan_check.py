#!/usr/bin/env python3
"""The ragged GQA expert's work plan (examples/sm90a/gqa_ragged_prefill_causal_h32_kv4_d128.cu,
find_work) replayed on the CPU: for random batches of sequence lengths, every rank of the grid's
upper bound maps to a (sequence, Q tile) at most once, every tile of every sequence gets a rank,
and tiles come by decreasing tile index (heaviest causal tiles first). The same arithmetic as
the kernel's warp code, sequentially: A(m) = sum over b of max(0, tiles(b) - m); the rank's tile
index is the largest m with A(m) > rank, found by the same binary search; its sequence is the
(rank - A(m + 1))-th sequence with more than m tiles, scanned 32 at a time as the ballots do.

    python3 bench/gqa_plan_check.py [--batches N] [--seed S]
"""
import argparse
import random

BLOCK_M = 128


def tiles(length):
    return (length + BLOCK_M - 1) // BLOCK_M


def a_of(ts, m):
    return sum(max(0, t - m) for t in ts)


def find_work(ts, rank):
    longest = max(ts, default=0)
    if rank >= a_of(ts, 0):
        return (-1, 0)
    lo, hi = 0, longest
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a_of(ts, mid) > rank:
            lo = mid
        else:
            hi = mid
    index = rank - a_of(ts, lo + 1)
    for first in range(0, len(ts), 32):
        chunk = [b for b in range(first, min(first + 32, len(ts))) if ts[b] > lo]
        if index < len(chunk):
            return (chunk[index], lo)
        index -= len(chunk)
    return (-1, 0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=300)
    parser.add_argument("--seed", type=int, default=31)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    for _ in range(args.batches):
        n = rng.randint(1, 80)
        lengths = [rng.choice([0, 1, 5, 127, 128, 129, 300, 1000, 4000, rng.randint(0, 9000)])
                   for _ in range(n)]
        ts = [tiles(length) for length in lengths]
        ranks = tiles(sum(lengths)) + n  # the kernel's grid.y
        found = [find_work(ts, r) for r in range(ranks)]
        got = sorted(w for w in found if w[0] >= 0)
        want = sorted((b, m) for b in range(n) for m in range(ts[b]))
        assert got == want, f"lengths {lengths}: tiles missed or repeated"
        order = [w[1] for w in found if w[0] >= 0]
        assert order == sorted(order, reverse=True), f"lengths {lengths}: not heaviest first"
    print(f"ok: {args.batches} batches, every tile once, heaviest first")


if __name__ == "__main__":
    main()
