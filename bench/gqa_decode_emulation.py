"""Emulation of examples/sm90a/gqa_paged_decode_h24_kv8_d128_ps1.cu's index arithmetic.

Per CTA (sequence b, kv head g) it emulates, byte for byte in a shared-memory array:
  * the Q TMA (2-D map {128, 24*batch}, box {64, 64}, SW128, zero fill past the last row),
  * the producer lanes' K/V gathers (3-D map {128, 8, pages}, box {64, 1, 1}, each half-row
    landing at stage (+ 16 KiB) + row * 128 with the swizzle applied to the absolute address),
  * the wgmma operand reads through the Bf16Tile canonical layouts (knowledge/sm90a/smem_desc),
  * the register fragments (accumulator and RS A layouts of wgmma.cuh), the owner-warp softmax
    (scaling, masking, quad shuffles, exp2, running max/sum, correction), P packing to bf16,
  * the epilogue: which thread writes which output element and LSE entry,
and checks the result against the definition's reference (float64), plus that every output
element and LSE entry is written exactly once over the grid.

    python3 bench/gqa_decode_emulation.py   (numpy; CPU only)
"""
import math
import random
import sys

import numpy as np

H, G, GROUP, D = 24, 8, 3, 128
BM, BN, STAGES = 64, 128, 3
Q_BYTES = BM * D * 2
Q_BOX = Q_BYTES // 2
TILE = BN * D * 2
BOX = TILE // 2
K_OFF = Q_BYTES
V_OFF = K_OFF + STAGES * TILE
SMEM = V_OFF + STAGES * TILE
LOG2E = 1.4426950408889634


def bf16(x):
    """Round float32 values to bf16 (nearest even), returned as float32."""
    a = np.asarray(x, dtype=np.float32)
    u = a.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return r.astype(np.uint32).view(np.float32)


def f32(x):
    return np.float32(x)


def swz(addr):
    """SW128: 16-B chunk bits [4,7) ^= bits [7,10) of the absolute shared address."""
    return addr ^ (((addr >> 7) & 7) << 4)


class Smem:
    def __init__(self, base):
        assert base % 1024 == 0
        self.base = base
        self.data = np.full(SMEM // 2, np.nan, dtype=np.float32)  # bf16 elements as float32
        self.written = np.zeros(SMEM // 2, dtype=np.int32)

    def tma_box(self, dst, rows):
        """rows: list of 64-element rows landing densely at dst (relative), swizzled."""
        assert (self.base + dst) % 128 == 0
        for r, vals in enumerate(rows):
            for c in range(64):
                logical = self.base + dst + r * 128 + c * 2
                phys = swz(logical) - self.base
                self.data[phys // 2] = vals[c]
                self.written[phys // 2] += 1

    def read(self, off):
        assert off % 2 == 0
        return self.data[off // 2]


def kmajor_offset(mn, row, col):
    # Bf16Tile{k128B, kK, mn, k}.offset(row, col)
    w = 64
    return swz((col // w) * mn * 128 + row * 128 + (col % w) * 2)


def mnmajor_offset(kext, row, col):
    # Bf16Tile{k128B, kMN, mn, k}.offset(row along MN, col along K)
    w = 64
    return swz((row // w) * kext * 128 + col * 128 + (row % w) * 2)


def read_kmajor(sm, tile_off, mn, k):
    out = np.zeros((mn, k), dtype=np.float32)
    for r in range(mn):
        for c in range(k):
            out[r, c] = sm.read(tile_off + kmajor_offset(mn, r, c))
    return out


def read_mnmajor(sm, tile_off, mn, kext):
    out = np.zeros((mn, kext), dtype=np.float32)
    for r in range(mn):
        for c in range(kext):
            out[r, c] = sm.read(tile_off + mnmajor_offset(kext, r, c))
    return out


def acc_index(t, i, e):
    """Accumulator register 4i+e of thread t -> (row, col)."""
    w, lane = t // 32, t % 32
    g, q = lane // 4, lane % 4
    return 16 * w + g + 8 * (e >> 1), 8 * i + 2 * q + (e & 1)


def cta(b, g, q, kc, vc, indptr, indices, sm_scale, out, lse, out_count, lse_count, base):
    batch = q.shape[0]
    scale_log2 = f32(f32(sm_scale) * f32(LOG2E))
    first = int(indptr[b])
    kv_len = int(indptr[b + 1]) - first
    n = (kv_len + BN - 1) // BN if kv_len > 0 else 0
    sm = Smem(base)
    qflat = q.reshape(batch * H, D)

    # registers of all 128 consumer threads
    s = np.zeros((128, 64), dtype=np.float32)
    o = np.zeros((128, 64), dtype=np.float32)
    p = np.zeros((128, 32, 2), dtype=np.float32)  # p[k] = (lo, hi) bf16 pair
    row_max = np.full(128, -np.inf, dtype=np.float32)
    row_sum = np.zeros(128, dtype=np.float32)
    owner = [t < 32 for t in range(128)]

    if n > 0:
        # Q: lane 0 of the producer, two boxes
        row0 = b * H + g * GROUP
        for half in range(2):
            rows = []
            for r in range(BM):
                gr = row0 + r
                rows.append(qflat[gr, 64 * half:64 * half + 64] if gr < batch * H else
                            np.zeros(64, dtype=np.float32))
            sm.tma_box(0 + half * Q_BOX, rows)
        Qs = read_kmajor(sm, 0, BM, D)
        for r in range(GROUP):
            assert np.array_equal(Qs[r], qflat[b * H + g * GROUP + r]), "Q row mismatch"

    def load_tile(ring, j, cache):
        # producer warp w, lane: row 32 w + lane, its page row_page(j, row), two half-rows
        stage = ring + (j % STAGES) * TILE
        before = sm.written[stage // 2:(stage + TILE) // 2].copy()
        for w in range(4):
            for lane in range(32):
                row = 32 * w + lane
                page = int(indices[first + min(j * BN + row, kv_len - 1)])
                dst = stage + row * 128
                sm.tma_box(dst, [cache[page, 0, g, 0:64]])
                sm.tma_box(dst + BOX, [cache[page, 0, g, 64:128]])
        assert (sm.written[stage // 2:(stage + TILE) // 2] - before == 1).all(), "stage cover"
        return stage

    def softmax(tile0):
        corr = np.ones(128, dtype=np.float32)
        partial = tile0 + BN > kv_len
        mx_local = np.zeros(128, dtype=np.float32)
        for t in range(32):
            lane = t % 32
            col = 2 * (lane % 4)
            mx = row_max[t]
            for i in range(16):
                for e in range(2):
                    x = f32(s[t, 4 * i + e] * scale_log2)
                    if partial and tile0 + col + 8 * i + e >= kv_len:
                        x = f32(-np.inf)
                    s[t, 4 * i + e] = x
                    mx = max(mx, x)
            mx_local[t] = mx
        for t in range(32):
            quad = (t // 4) * 4
            mx = max(mx_local[quad:quad + 4])  # shfl_xor 1, 2
            shift = f32(0.0) if mx == -np.inf else mx
            c = f32(2.0 ** float(f32(row_max[t] - shift)))  # 2^-inf = 0
            corr[t] = c
            row_max[t] = mx
            ssum = f32(0.0)
            for i in range(16):
                for e in range(2):
                    v = f32(2.0 ** float(f32(s[t, 4 * i + e] - shift)))
                    s[t, 4 * i + e] = v
                ssum = f32(ssum + f32(s[t, 4 * i] + s[t, 4 * i + 1]))
            row_sum[t] = f32(row_sum[t] * c + ssum)
        return corr

    def pack():
        for t in range(32):
            for i in range(16):
                p[t, 2 * i] = bf16([s[t, 4 * i], s[t, 4 * i + 1]])

    def gemm_qk(k_stage):
        Ks = read_kmajor(sm, k_stage, BN, D)
        S = Qs.astype(np.float64) @ Ks.astype(np.float64).T
        for t in range(128):
            for i in range(16):
                for e in range(4):
                    r, c = acc_index(t, i, e)
                    s[t, 4 * i + e] = S[r, c]
        return Ks

    def gemm_pv(v_stage, first_pv):
        Vs = read_mnmajor(sm, v_stage, D, BN)  # (d, key)
        # A matrix P (64 x 128 keys) from the RS fragments
        P = np.full((BM, BN), np.nan, dtype=np.float32)
        for t in range(128):
            w, lane = t // 32, t % 32
            gg, qq = lane // 4, lane % 4
            for step in range(BN // 16):
                a = [p[t, 4 * step + x] for x in range(4)]
                k0 = 16 * step
                coords = [(16 * w + gg, k0 + 2 * qq), (16 * w + gg + 8, k0 + 2 * qq),
                          (16 * w + gg, k0 + 2 * qq + 8), (16 * w + gg + 8, k0 + 2 * qq + 8)]
                for x, (r, c) in enumerate(coords):
                    P[r, c] = a[x][0]
                    P[r, c + 1] = a[x][1]
        assert not np.isnan(P).any()
        O = P.astype(np.float64) @ Vs.astype(np.float64).T  # (64, d)
        for t in range(128):
            for i in range(16):
                for e in range(4):
                    r, c = acc_index(t, i, e)
                    o[t, 4 * i + e] = (0.0 if first_pv else o[t, 4 * i + e]) + O[r, c]
        return P

    if n > 0:
        ks = load_tile(K_OFF, 0, kc)
        Ks = gemm_qk(ks)
        # check K rows: smem row r of tile 0 is key r (or the last key)
        for r in range(BN):
            page = int(indices[first + min(r, kv_len - 1)])
            assert np.array_equal(Ks[r], kc[page, 0, g]), "K row mismatch"
        softmax(0)
        pack()
        v_prev = load_tile(V_OFF, 0, vc)
        for j in range(1, n):
            ks = load_tile(K_OFF, j, kc)
            gemm_qk(ks)
            P = gemm_pv(v_prev, j == 1)
            assert np.all(P[GROUP:8] == P[GROUP:8]) and np.all(P[8:] == 0), "padding P"
            corr = softmax(j * BN)
            for t in range(32):
                for i in range(16):
                    o[t, 4 * i] *= corr[t]
                    o[t, 4 * i + 1] *= corr[t]
            pack()
            v_prev = load_tile(V_OFF, j, vc)
            # V tile check: element (d, key)
            Vs = read_mnmajor(sm, v_prev, D, BN)
            for r in range(0, BN, 17):
                page = int(indices[first + min(j * BN + r, kv_len - 1)])
                assert np.array_equal(Vs[:, r], vc[page, 0, g]), "V row mismatch"
        gemm_pv(v_prev, n == 1)

    # epilogue, warp 0
    for t in range(32):
        lane = t
        r = lane // 4
        quad = (t // 4) * 4
        l = f32(sum(row_sum[quad:quad + 4]))
        inv = f32(1.0 / l) if l > 0 else f32(0.0)
        if r >= GROUP:
            continue
        row = b * H + g * GROUP + r
        for i in range(16):
            c = 8 * i + 2 * (lane % 4)
            vals = bf16([o[t, 4 * i] * inv, o[t, 4 * i + 1] * inv])
            out.reshape(-1, D)[row, c:c + 2] = vals
            out_count.reshape(-1, D)[row, c:c + 2] += 1
        if lane % 4 == 0:
            lse.reshape(-1)[row] = row_max[t] + math.log2(l) if l > 0 else -np.inf
            lse_count.reshape(-1)[row] += 1
    # every smem element the wgmmas read was written by a TMA (when n > 0)
    if n > 0:
        assert (sm.written[:Q_BYTES // 2] == 1).all()


def reference(q, kc, vc, indptr, indices, sm_scale):
    batch = q.shape[0]
    out = np.zeros((batch, H, D))
    lse = np.full((batch, H), -np.inf)
    for b in range(batch):
        k0, k1 = int(indptr[b]), int(indptr[b + 1])
        if k0 >= k1:
            continue
        pages = indices[k0:k1]
        k = kc[pages, 0].astype(np.float64)  # (n, 8, D)
        v = vc[pages, 0].astype(np.float64)
        for h in range(H):
            logits = k[:, h // GROUP] @ q[b, h].astype(np.float64) * sm_scale
            m = logits.max()
            e = np.exp(logits - m)
            lse[b, h] = (m + math.log(e.sum())) / math.log(2.0)
            out[b, h] = (e / e.sum()) @ v[:, h // GROUP]
    return out, lse


def run_case(seed, lens, num_pages, sm_scale):
    rng = np.random.default_rng(seed)
    batch = len(lens)
    q = bf16(rng.standard_normal((batch, H, D)).astype(np.float32))
    kc = bf16(rng.standard_normal((num_pages, 1, G, D)).astype(np.float32))
    vc = bf16(rng.standard_normal((num_pages, 1, G, D)).astype(np.float32))
    indptr = np.zeros(batch + 1, dtype=np.int64)
    indptr[1:] = np.cumsum(lens)
    indices = rng.integers(0, num_pages, size=int(indptr[-1]))
    out = np.full((batch, H, D), np.nan, dtype=np.float32)
    lse = np.full((batch, H), np.nan, dtype=np.float32)
    out_count = np.zeros((batch, H, D), dtype=np.int32)
    lse_count = np.zeros((batch, H), dtype=np.int32)
    for blk in range(batch * G):  # blockIdx.x = 8 b + g
        b, g = blk // G, blk % G
        cta(b, g, q, kc, vc, indptr, indices, sm_scale, out, lse, out_count, lse_count,
            base=1024 * int(rng.integers(0, 3)))
    assert (out_count == 1).all(), "output element written != once"
    assert (lse_count == 1).all(), "lse entry written != once"
    ref_out, ref_lse = reference(q, kc, vc, indptr, indices, sm_scale)
    err_out = np.abs(out - ref_out).max()
    fin = np.isfinite(ref_lse)
    assert (np.isneginf(lse) == ~fin).all(), "lse -inf pattern"
    err_lse = np.abs(lse[fin] - ref_lse[fin]).max() if fin.any() else 0.0
    ok = err_out < 2e-2 and err_lse < 1e-3
    print(f"seed {seed} lens {lens} pages {num_pages} scale {sm_scale:+.4f}: "
          f"max|out-ref| {err_out:.2e} max|lse-ref| {err_lse:.2e} {'ok' if ok else 'FAIL'}")
    return ok


if __name__ == "__main__":
    cases = [
        (1, [1], 5, 0.0883883),
        (2, [0, 3], 7, 0.0883883),
        (3, [128, 129, 0], 300, 0.0883883),
        (4, [127, 255, 256], 50, -0.125),
        (5, [300, 5], 2000, 0.0883883),
        (6, [0], 1, 0.0883883),
        (7, [513, 1, 2], 1000, 0.3),
        (8, [17, 0, 0, 40], 64, 0.0),
    ]
    rnd = random.Random(11)
    for seed in range(20, 26):
        lens = [rnd.choice([0, 1, 2, 63, 64, 127, 128, 129, 200, 256, 257, 383, 384, 385])
                for _ in range(rnd.randint(1, 4))]
        cases.append((seed, lens, rnd.randint(1, 800), rnd.choice([0.0883883, 0.5, -0.2])))
    ok = all([run_case(*c) for c in cases])
    print("ALL OK" if ok else "FAILURES")
    sys.exit(0 if ok else 1)
