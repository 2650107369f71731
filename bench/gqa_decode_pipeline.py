"""Random-interleaving simulation of the decode kernel's mbarrier pipeline (one CTA).

Agents: the 4 producer warps (warp 0 also Q; each its quarter of K_j / V_{j-1}, as produce()),
4 consumer warps (consume()), and asynchronous events: TMA chunk completions (each a
complete_tx of its bytes, in any order, any time after issue) and wgmma group completions (a
group starts once all 4 warps issued it, completes in commit order per warp... modelled as
in order overall, any time after start). mbarrier semantics: arrival count, tx count, phase;
try_wait.parity(P) succeeds iff (phase & 1) != P. Checks: no deadlock; every poll of a wait is
at most one phase away from the phase it means (no parity aliasing); a TMA never writes a stage
whose previous tile some wgmma group has not finished reading (or some warp not yet issued);
a wgmma group sees its stage fully written with the expected tile when it starts and ends;
expect_tx precedes complete_tx; Q is read only after it landed; the CTA ends with every
barrier consistent (no arrivals or bytes pending on a started phase).

    python3 bench/gqa_decode_pipeline.py   (CPU only)
"""
import random
import sys

KB = 1024
TILE = 32 * KB


class Barrier:
    def __init__(self, name, count):
        self.name, self.count = name, count
        self.pending, self.tx, self.phase = count, 0, 0
        self.expected_tx_seen = 0

    def _maybe_complete(self):
        if self.pending == 0 and self.tx == 0:
            self.phase += 1
            self.pending = self.count

    def arrive(self):
        assert self.pending > 0
        self.pending -= 1
        self._maybe_complete()

    def arrive_expect_tx(self, nbytes):
        self.tx += nbytes
        self.pending -= 1
        assert self.pending >= 0
        self._maybe_complete()

    def complete_tx(self, nbytes):
        self.tx -= nbytes
        assert self.tx >= 0, f"{self.name}: complete_tx before expect_tx"
        self._maybe_complete()

    def try_wait(self, parity, meant_phase):
        # meant_phase: index of the phase whose completion the waiter means (-1: the one before
        # the first, complete from the start)
        assert self.phase in (meant_phase, meant_phase + 1) or meant_phase == -1 and \
            self.phase == 0, f"{self.name}: parity aliasing (phase {self.phase}, meant {meant_phase})"
        return (self.phase & 1) != parity


class Sim:
    def __init__(self, n, stages, seed):
        self.n, self.S = n, stages
        self.rng = random.Random(seed)
        S = stages
        self.full_q = Barrier("full_q", 1)
        self.full_k = [Barrier(f"full_k{s}", 4) for s in range(S)]
        self.empty_k = [Barrier(f"empty_k{s}", 4) for s in range(S)]
        self.full_v = [Barrier(f"full_v{s}", 4) for s in range(S)]
        self.empty_v = [Barrier(f"empty_v{s}", 4) for s in range(S)]
        # stage contents: (tile, bytes written)
        self.stage = {("K", s): (None, 0) for s in range(S)}
        self.stage.update({("V", s): (None, 0) for s in range(S)})
        self.q_bytes = 0
        self.async_tma = []  # (kind, stage, tile, bytes, barrier)
        self.groups = {}  # seq -> dict(reads=[(kind, tile)], issued=set(), started, done)
        self.group_order = []
        self.done_reads = set()  # (kind, tile) fully read (group completed)
        self.agents = {f"producer{w}": self.producer(w) for w in range(4)}
        for w in range(4):
            self.agents[f"warp{w}"] = self.consumer(w)
        self.issued_count = [0] * 4

    # ---- producer -------------------------------------------------------------------------
    def load_stage(self, kind, j):
        S = self.S
        full = (self.full_k if kind == "K" else self.full_v)[j % S]
        empty = (self.empty_k if kind == "K" else self.empty_v)[j % S]
        parity = ((j // S) & 1) ^ 1
        while not empty.try_wait(parity, j // S - 1):
            yield "spin"
        full.arrive_expect_tx(TILE // 4)  # this warp's quarter
        yield
        # the warp's 64 half-row TMAs, modelled as 2 chunks of 4 KiB
        for c in range(2):
            self.async_tma.append((kind, j % S, j, 4 * KB, full))
            if self.rng.random() < 0.3:
                yield

    def producer(self, w):
        n = self.n
        if n <= 0:
            return
        if w == 0:
            self.full_q.arrive_expect_tx(16 * KB)
            self.async_tma.append(("Q", 0, 0, 8 * KB, self.full_q))
            self.async_tma.append(("Q", 0, 0, 8 * KB, self.full_q))
        yield
        for j in range(n):
            yield from self.load_stage("K", j)
            if j > 0:
                yield from self.load_stage("V", j - 1)
        yield from self.load_stage("V", n - 1)

    # ---- consumer -------------------------------------------------------------------------
    def wait_stage(self, full, j):
        while not full.try_wait((j // self.S) & 1, j // self.S):
            yield "spin"

    def issue(self, w, reads):
        seq = self.issued_count[w]
        self.issued_count[w] += 1
        g = self.groups.setdefault(seq, {"reads": reads, "issued": set(), "started": False,
                                         "done": False})
        assert g["reads"] == reads, "warps disagree on the wgmma sequence"
        g["issued"].add(w)
        if len(g["issued"]) == 4:
            self.start_group(seq)
        return seq

    def check_reads(self, reads):
        for kind, tile in reads:
            if kind == "Q":
                assert self.q_bytes == 16 * KB, "Q read before it landed"
                continue
            t, nbytes = self.stage[(kind, tile % self.S)]
            assert t == tile and nbytes == TILE, f"{kind}{tile}: stage holds {t} ({nbytes} B)"

    def start_group(self, seq):
        g = self.groups[seq]
        self.check_reads(g["reads"])
        g["started"] = True
        self.group_order.append(seq)

    def wait_group(self, w, pending):
        while True:
            mine = [s for s in range(self.issued_count[w]) if not self.groups[s]["done"]]
            if len(mine) <= pending:
                return
            yield "spin"

    def consumer(self, w):
        n, S = self.n, self.S
        if n <= 0:
            return
        while not self.full_q.try_wait(0, 0):
            yield "spin"
        yield from self.wait_stage(self.full_k[0], 0)
        self.issue(w, [("Q", 0), ("K", 0)])
        yield
        yield from self.wait_group(w, 0)
        self.empty_k[0].arrive()
        yield
        for j in range(1, n):
            ks, vs = j % S, (j - 1) % S
            yield from self.wait_stage(self.full_k[ks], j)
            yield from self.wait_stage(self.full_v[vs], j - 1)
            self.issue(w, [("Q", 0), ("K", j)])
            yield
            self.issue(w, [("V", j - 1)])
            yield
            yield from self.wait_group(w, 1)
            self.empty_k[ks].arrive()
            yield
            yield from self.wait_group(w, 0)
            self.empty_v[vs].arrive()
            yield
        vs = (n - 1) % S
        yield from self.wait_stage(self.full_v[vs], n - 1)
        self.issue(w, [("V", n - 1)])
        yield
        yield from self.wait_group(w, 0)
        self.empty_v[vs].arrive()

    # ---- async events -----------------------------------------------------------------------
    def complete_tma(self, idx):
        kind, s, tile, nbytes, bar = self.async_tma.pop(idx)
        if kind == "Q":
            self.q_bytes += nbytes
        else:
            t, have = self.stage[(kind, s)]
            if t != tile:
                # first bytes of a new tile: the previous tile of this stage must be fully read
                if t is not None:
                    assert (kind, t) in self.done_reads, \
                        f"TMA overwrites {kind}{t} in stage {s} before its reads finished"
                    assert t == tile - self.S
                self.stage[(kind, s)] = (tile, nbytes)
            else:
                self.stage[(kind, s)] = (tile, have + nbytes)
        bar.complete_tx(nbytes)

    def complete_group(self):
        # the oldest started, not done group (in order)
        for seq in self.group_order:
            g = self.groups[seq]
            if not g["done"]:
                self.check_reads(g["reads"])
                g["done"] = True
                for r in g["reads"]:
                    self.done_reads.add(r)
                return True
        return False

    def async_pending(self):
        return bool(self.async_tma) or any(not self.groups[s]["done"] for s in self.group_order)

    def run(self):
        steps = 0
        while self.agents or self.async_pending():
            steps += 1
            assert steps < 10 ** 6
            choices = [("agent", a) for a in self.agents]
            choices += [("tma", i) for i in range(len(self.async_tma))]
            if any(not self.groups[s]["done"] for s in self.group_order):
                choices.append(("group", None))
            kind, arg = self.rng.choice(choices)
            if kind == "tma":
                self.complete_tma(arg)
            elif kind == "group":
                self.complete_group()
            else:
                snap = self.state_key()
                try:
                    next(self.agents[arg])
                except StopIteration:
                    del self.agents[arg]
                    continue
                if self.state_key() == snap and not self.async_pending() and \
                        self.all_spinning():
                    raise AssertionError(f"deadlock: {sorted(self.agents)} spinning")
        # end state
        for b in [self.full_q] + self.full_k + self.empty_k + self.full_v + self.empty_v:
            assert b.tx == 0 and b.pending == b.count, f"{b.name} left mid-phase"
        assert all(g["done"] for g in self.groups.values())
        assert all(len(g["issued"]) == 4 for g in self.groups.values())
        return True

    def state_key(self):
        bars = [self.full_q] + self.full_k + self.empty_k + self.full_v + self.empty_v
        return (tuple((b.pending, b.tx, b.phase) for b in bars), tuple(self.issued_count),
                len(self.async_tma), tuple(sorted(self.stage.items(), key=str)),
                tuple(g["done"] for g in self.groups.values()))

    def all_spinning(self):
        # deadlock: no async work pending, and every live agent, stepped until it spins in a
        # wait, changes nothing
        if self.async_pending():
            return False
        snap = self.state_key()
        for a in list(self.agents):
            for _ in range(1000):
                try:
                    r = next(self.agents[a])
                except StopIteration:
                    del self.agents[a]
                    return False
                if self.state_key() != snap or self.async_pending():
                    return False
                if r == "spin":
                    break
        return True


def main():
    total = 0
    for stages in (2, 3, 4):
        for n in range(0, 11):
            for seed in range(60):
                Sim(n, stages, seed * 1000 + n * 10 + stages).run()
                total += 1
    print(f"{total} runs, no deadlock, no hazard")

    # negative controls: the simulation must catch these bugs
    def expect_fail(label, patch):
        orig = {k: getattr(Sim, k) for k in patch}
        for k, v in patch.items():
            setattr(Sim, k, v)
        caught = 0
        try:
            for seed in range(40):
                try:
                    Sim(6, 3, seed).run()
                except AssertionError:
                    caught += 1
        finally:
            for k, v in orig.items():
                setattr(Sim, k, v)
        print(f"control '{label}': caught in {caught}/40 runs")
        return caught > 0

    def bad_release_early(self, w):  # release K before the S wgmma completed
        n, S = self.n, self.S
        while not self.full_q.try_wait(0, 0):
            yield
        yield from self.wait_stage(self.full_k[0], 0)
        self.issue(w, [("Q", 0), ("K", 0)])
        self.empty_k[0].arrive()
        yield
        yield from self.wait_group(w, 0)
        yield
        for j in range(1, n):
            ks, vs = j % S, (j - 1) % S
            yield from self.wait_stage(self.full_k[ks], j)
            yield from self.wait_stage(self.full_v[vs], j - 1)
            self.issue(w, [("Q", 0), ("K", j)])
            self.empty_k[ks].arrive()
            yield
            self.issue(w, [("V", j - 1)])
            yield
            yield from self.wait_group(w, 0)
            self.empty_v[vs].arrive()
            yield
        vs = (n - 1) % S
        yield from self.wait_stage(self.full_v[vs], n - 1)
        self.issue(w, [("V", n - 1)])
        yield
        yield from self.wait_group(w, 0)
        self.empty_v[vs].arrive()

    orig_init = Sim.__init__

    def init_count3(self, n, stages, seed):  # empty barriers expecting 3 arrivals
        orig_init(self, n, stages, seed)
        for b in self.empty_k + self.empty_v:
            b.count = b.pending = 3

    def init_count5(self, n, stages, seed):  # expecting 5 arrivals: hang
        orig_init(self, n, stages, seed)
        for b in self.empty_k + self.empty_v:
            b.count = b.pending = 5

    ok = expect_fail("release before wgmma done", {"consumer": bad_release_early})
    ok &= expect_fail("empty count 3", {"__init__": init_count3})
    ok &= expect_fail("empty count 5", {"__init__": init_count5})
    print("ALL OK" if ok else "CONTROL FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
