"""Checker for the tiled-attention kata: the values, and the memory traffic the harness counted.

The learner's function runs against :mod:`minigpt.katas.fast_memory` (the checker's ``adapter``),
which returns (O as stored, floats read, floats written). O is compared with the reference's;
the reads plus writes with FlashAttention's count: Algorithm 1 of Dao et al. (2022), whose
Theorem 2 gives Θ(N²d²/M) HBM accesses, counted exactly by :func:`flash_bound`. A solution passes
within :data:`SLACK` times that count: the harness counts every tensor the code holds at a load
against M (the paper counts its tiles only), so a correct tiling uses smaller tiles than the
paper's. Row-by-row attention is correct and reads K and V N times: far outside.
"""

from __future__ import annotations

import math

import torch

from minigpt.katas.checkers.base import Case, Checker, Mistake, generator, randn

F64, F32 = torch.float64, torch.float32
SLACK = 2.0


def flash_bound(n: int, d: int, capacity: int) -> int:
    """FlashAttention's reads plus writes, in floats, for (n, d) matrices and a fast memory of
    ``capacity``: Algorithm 1 of Dao et al. (2022) counted exactly. Key/value tiles of
    Bc = ⌈M/4d⌉ rows; O, l, m written once at the start (Nd + 2N); K and V read once (2Nd); for each
    of the ⌈N/Bc⌉ key/value tiles, Q, O, l, m read (2Nd + 2N) and O, l, m written (Nd + 2N)."""
    key_rows = max(1, math.ceil(capacity / (4 * d)))
    return 3 * n * d + 2 * n + math.ceil(n / key_rows) * (3 * n * d + 4 * n)


def _cases() -> list[Case]:
    g = generator(220)

    def case(n, d, capacity, dtype=F64, scale=1.0):
        return tuple(randn(g, n, d, dtype=dtype, scale=scale) for _ in range(3)) + (capacity,)

    return [
        Case("N=48, d=8, M=1024 floats", case(48, 8, 1024)),
        Case("N=40 (not a multiple of a tile), d=4, M=512", case(40, 4, 512)),
        Case("large scores (up to several hundred: exp overflows), N=32, d=8, M=512", case(32, 8, 512, scale=14.0)),
        Case("float32, N=32, d=16, M=1024", case(32, 16, 1024, dtype=F32)),
        Case("M large enough for everything: N=12, d=4, M=4096", case(12, 4, 4096)),
        Case("one token: N=1, d=4, M=64", case(1, 4, 64)),
    ]


def _tiled(memory, q, k, v, out, *, rows=None, rescale=True, scale=True, subtract_max=True, normalise=True):
    """The reference's loop with one thing done wrong (or query tiles of ``rows`` rows)."""
    n, d = q.shape
    bc = max(1, min(n, memory.capacity // (8 * d)))
    br = rows or max(1, min(n, (memory.capacity - 3 * bc * d) // (2 * d + 2 * bc + 4)))

    def one_query_tile(start, stop):
        qi = memory.load(q, start, stop) / (math.sqrt(d) if scale else 1.0)
        m = torch.full((qi.shape[0], 1), -math.inf, dtype=qi.dtype)
        total, acc = torch.zeros((qi.shape[0], 1), dtype=qi.dtype), torch.zeros_like(qi)
        for j in range(0, n, bc):
            kj = memory.load(k, j, min(j + bc, n))
            vj = memory.load(v, j, min(j + bc, n))
            s = qi @ kj.T
            m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True)) if subtract_max else torch.zeros_like(m)
            p = (s - m_new).exp()
            shrink = (m - m_new).exp() if rescale and subtract_max else torch.ones_like(m)
            total = total * shrink + p.sum(dim=-1, keepdim=True)
            acc = acc * shrink + p @ vj
            m = m_new
        return acc / total if normalise else acc

    for i in range(0, n, br):
        memory.store(out, i, one_query_tile(i, min(i + br, n)))


def traffic_gap(case: Case, obtained) -> str | None:
    """None when the counted reads plus writes are within SLACK × the bound; else by how much not."""
    q, capacity = case.args[0], case.args[3]
    n, d = q.shape
    bound = flash_bound(n, d, capacity)
    _, reads, writes = obtained
    if reads + writes <= SLACK * bound:
        return None
    return (f"memory traffic: the harness counted {reads + writes:,} floats ({reads:,} read, {writes:,} written); "
            f"FlashAttention's count for N={n}, d={d}, M={capacity} (Algorithm 1 of Dao et al. 2022, key tiles of "
            f"⌈M/4d⌉ rows) is 3Nd + 2N + ⌈N/Bc⌉·(3Nd + 4N) = {bound:,}, and a pass "
            f"allows {SLACK:g}× that ({int(SLACK * bound):,}): yours is {(reads + writes) / bound:.1f}× the bound")


def compare(case: Case, expected, obtained, difference) -> str | None:
    """Where ``obtained`` (O, reads, writes) falls short: O's values first, then the traffic."""
    if not (isinstance(obtained, tuple) and len(obtained) == 3):
        return f"the harness returned {obtained!r}, not (O, reads, writes)"
    gap = difference(expected[0], obtained[0])
    if gap and bool(obtained[0].isnan().all()):
        return "no row of O was stored (memory.store(out, start, tile) writes them)"
    return gap or traffic_gap(case, obtained)


def same(mistake_value, obtained, difference) -> bool:
    """A mistake matches when its O matches and its traffic is within a quarter of the learner's."""
    if difference(mistake_value[0], obtained[0]) is not None:
        return False
    mine, theirs = mistake_value[1] + mistake_value[2], obtained[1] + obtained[2]
    return abs(mine - theirs) <= 0.25 * max(mine, theirs)


TILED_ATTENTION = Checker(_cases, (
    Mistake("one query row at a time: K and V are read N times each (2·N²·d floats); load query tiles as large as "
            "fast memory allows so K and V are read ⌈N/Br⌉ times", lambda *a: _tiled(*a, rows=1)),
    Mistake("the running sum and output were not rescaled by exp(m_old − m_new) when a row's maximum grew",
            lambda *a: _tiled(*a, rescale=False)),
    Mistake("the scores were not divided by √d", lambda *a: _tiled(*a, scale=False)),
    Mistake("the exponentials were taken without subtracting the running maximum: large scores overflow to inf",
            lambda *a: _tiled(*a, subtract_max=False)),
    Mistake("O was stored before dividing by the running sum of the exponentials", lambda *a: _tiled(*a, normalise=False)),
), rtol=1e-4, atol=1e-4, adapter="fast_memory", compare=compare, same=same)

CHECKERS = {"tiled_attention": TILED_ATTENTION}
