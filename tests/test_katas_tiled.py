"""The tiled-attention kata (issue 49): a simulated fast memory of M floats, counted loads and stores,
graded on the values and on the traffic against FlashAttention's count.

Graded in this process (``grade_function``, the same adapter and bans as the bounded runner's
harness); the bounded runner itself is tried in the soak tier (tests/hostile/test_kata_reaper.py
grades every reference there) and once here for a bypass.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from minigpt.katas import fast_memory
from minigpt.katas.catalogue import kata_by_name
from minigpt.katas.checkers import checker
from minigpt.katas.checkers.tiled import SLACK, flash_bound
from minigpt.katas.grading import calling, grade_function, reference
from tests.helpers.tiled_solutions import IMPORTS, NAIVE

KATA = "tiled_attention"
def _attention(q, k, v):
    return F.scaled_dot_product_attention(q[None], k[None], v[None])[0]


def test_the_reference_gives_attention_within_the_bound_on_every_case():
    run = calling(checker(KATA), reference(kata_by_name(KATA)))
    for case in checker(KATA).cases():
        q, k, v, capacity = case.args
        out, reads, writes = run(q, k, v, capacity)
        assert torch.allclose(out, _attention(q, k, v), rtol=1e-5, atol=1e-6), case.label
        assert reads + writes <= SLACK * flash_bound(q.shape[0], q.shape[1], capacity), case.label
        assert writes == q.numel()  # each row of O stored once


def test_the_bound_is_algorithm_one_of_the_paper_counted_exactly():
    """N=64, d=8, M=1024: Bc = ⌈1024/32⌉ = 32, so two key/value tiles. O, l, m initialised (512 + 128),
    K and V read once (1024), then per tile Q, O, l, m read (1024 + 128) and O, l, m written (512 + 128)."""
    assert flash_bound(64, 8, 1024) == (512 + 128) + 1024 + 2 * (1024 + 128 + 512 + 128) == 5248
    # Θ(N²d²/M): with M four times larger (and still under N·d·4), the quadratic part shrinks about 4×
    quadratic = [flash_bound(256, 16, m) - 3 * 256 * 16 - 2 * 256 for m in (1024, 4096)]
    assert quadratic[0] == 4 * quadratic[1]
    assert flash_bound(12, 4, 4096) == 3 * 48 + 24 + (3 * 48 + 48)  # everything fits: one tile


def test_the_naive_solution_passes_the_values_and_fails_the_traffic_saying_by_how_much():
    kata = kata_by_name(KATA)
    report = grade_function(kata, NAIVE)
    assert not report.passed and report.error is None
    first = report.failures[0]
    assert first.where.startswith("memory traffic: the harness counted") and "× the bound" in first.where
    times = float(first.where.rpartition("yours is ")[2].split("×")[0])
    assert times > 2 * SLACK  # far outside, not a matter of constants
    assert first.mistake and "one query row at a time" in first.mistake
    run = calling(checker(KATA), grade_function.__globals__["load_function"](kata, NAIVE))
    q, k, v, capacity = checker(KATA).cases()[0].args
    assert torch.allclose(run(q, k, v, capacity)[0], _attention(q, k, v))  # the values are right


WRONG = [
    ("shrink = (m - m_new).exp()", "shrink = torch.ones_like(m)", "rescaled by exp(m_old − m_new)"),
    ("/ math.sqrt(d)\n", "\n", "not divided by √d"),
    ("acc / total", "acc", "before dividing by the running sum"),
]


@pytest.mark.parametrize(("old", "new", "named"), WRONG)
def test_wrong_solutions_fail_with_their_named_mistake(old, new, named):
    kata = kata_by_name(KATA)
    assert old in kata.solution
    report = grade_function(kata, kata.solution.replace(old, new, 1))
    assert not report.passed and report.failures, report.summary()
    assert report.failures[0].mistake and named in report.failures[0].mistake, report.summary()


def test_the_missing_maximum_overflows_on_large_scores_and_is_named():
    kata = kata_by_name(KATA)
    source = kata.solution.replace("torch.maximum(m, s.amax(dim=-1, keepdim=True))", "torch.zeros_like(m)")
    source = source.replace("shrink = (m - m_new).exp()", "shrink = torch.ones_like(m)")
    report = grade_function(kata, source)
    assert [f.case for f in report.failures] == [c.label for c in checker(KATA).cases() if "large scores" in c.label]
    assert "without subtracting the running maximum" in report.failures[0].mistake


def test_holding_more_than_m_floats_is_an_error_even_when_caught():
    kata = kata_by_name(KATA)
    greedy = kata.solution.replace("    n, d = q.shape\n", "    n, d = q.shape\n    try:\n"
                                   "        everything = [memory.load(h, 0, n) for h in (q, k, v)]\n"
                                   "    except Exception:\n        pass\n", 1)
    report = grade_function(kata, greedy)
    assert not report.passed
    assert "fast memory overflow" in report.failures[0].where, report.summary()


def test_a_stub_that_stores_nothing_is_told_so():
    source = IMPORTS + "\ndef tiled_attention(memory, q, k, v, out):\n    memory.load(q, 0, 1)\n"
    report = grade_function(kata_by_name(KATA), source)
    assert "no row of O was stored" in report.failures[0].where


def test_loads_outside_the_matrix_and_foreign_handles_are_refused():
    q = torch.randn(4, 2, dtype=torch.float64)

    def bad(memory, q, k, v, out):
        for attempt in (lambda: memory.load(q, 2, 9), lambda: memory.load("q", 0, 1), lambda: memory.store(out, 3, q)):
            with pytest.raises(Exception) as refused:
                attempt()
            assert "rows" in str(refused.value) or "handles" in str(refused.value)
        memory.store(out, 0, memory.load(q, 0, 4))

    out, reads, writes = fast_memory.run(bad, q, q, q, 64)
    assert torch.equal(out, q) and (reads, writes) == (8, 8)


def test_the_kata_says_the_bound_it_is_graded_against():
    stub = kata_by_name(KATA).stub
    assert "2×" in stub and "Dao et al. 2022" in stub and "3·N·d + 2·N + ⌈N / Bc⌉·(3·N·d + 4·N)" in stub
    assert SLACK == 2  # the slack the stub states, a constant written in the checker


# Each trick, if it worked, would reach Q, K, V (or the counters) without a counted load and store
# the right O with almost no traffic: each must fail the kata.
CHEAT = ("    m = None\n    for x in found:\n        if isinstance(x, dict) and {'q', 'k', 'v'} <= set(x):\n            m = x\n"
         "    qq, kk, vv = m['q'], m['k'], m['v']\n    w = (qq @ kk.T / math.sqrt(qq.shape[1]))\n"
         "    w = (w - w.amax(-1, keepdim=True)).exp()\n    memory.store(out, 0, (w / w.sum(-1, keepdim=True)) @ vv)\n")
# trick → (what it does, what the failure says): each reason names the refusal, not a bug in the trick.
BYPASSES = {
    "the handle's and the memory's attributes": (
        "    found = [getattr(q, a, None) for a in dir(q)]\n    found += [getattr(memory, a, None) for a in dir(memory)]\n",
        "'NoneType' object is not subscriptable"),  # no attribute leads to the matrices
    "the controller's frame (gi_frame)": (
        "    found = [memory._controller.gi_frame.f_locals.get('matrices')]\n", "refuses object.__getattr__"),
    "the garbage collector": (
        "    import gc\n    found = gc.get_objects() + gc.get_referents(memory._controller)\n", "refuses gc.get_objects"),
    "the caller's frames": (
        "    import sys\n    f, found = sys._getframe(), []\n    while f is not None:\n"
        "        found += list(f.f_locals.values())\n        f = f.f_back\n", "refuses sys._getframe"),
    "a traceback's frames": (
        "    found = []\n    try:\n        memory.load(q, 0, 10 ** 6)\n    except Exception as e:\n"
        "        tb = e.__traceback__\n        while tb is not None:\n"
        "            found += list(tb.tb_frame.f_locals.values())\n            tb = tb.tb_next\n",
        "refuses object.__getattr__"),
    "a tracer": (
        "    import sys\n    found = []\n    sys.settrace(lambda frame, event, arg: found.extend(frame.f_locals.values()))\n"
        "    memory.load(q, 0, 1)\n    sys.settrace(None)\n", "refuses sys.settrace"),
    "closing the controller, then reading the grader's frames": (
        "    import sys\n    memory._controller.close()\n    f, found = sys._getframe(), []\n    while f is not None:\n"
        "        found.append(f.f_locals)\n        f = f.f_back\n", "stopped the fast memory"),
}


@pytest.mark.parametrize("trick", list(BYPASSES))
def test_the_count_cannot_be_bypassed(trick):
    body, reason = BYPASSES[trick]
    source = IMPORTS + "\ndef tiled_attention(memory, q, k, v, out):\n" + body + CHEAT
    report = grade_function(kata_by_name(KATA), source)
    assert not report.passed and report.failures, report.summary()
    assert all(f.obtained == "an exception" and reason in f.where for f in report.failures), report.summary()


def test_hoarding_outside_the_counter_or_in_python_numbers_is_refused_by_name():
    kata = kata_by_name(KATA)
    hoard = (IMPORTS + "from torch.utils._python_dispatch import _disable_current_modes\n\n"
             "def tiled_attention(memory, q, k, v, out):\n    with _disable_current_modes():\n"
             "        kept = memory.load(k, 0, 1).clone()\n")
    listed = IMPORTS + "\ndef tiled_attention(memory, q, k, v, out):\n    kept = memory.load(k, 0, 1).tolist()\n"
    popped = (IMPORTS + "\ndef tiled_attention(memory, q, k, v, out):\n"
              "    mode = getattr(torch._C, '_pop_torch_dispatch_' + 'stack')()\n    kept = memory.load(k, 0, 1).clone()\n")
    for source, rule in ((hoard, "_disable_current_modes"), (listed, "Tensor.tolist"), (popped, "_pop_torch_dispatch_stack")):
        report = grade_function(kata, source)
        assert report.error and rule in report.error, report.summary()


def test_taking_the_counter_away_fails_the_case():
    """Swapping the dispatch mode's method (so copies are not seen) is noticed at the next load."""
    source = (IMPORTS + "from torch.utils._python_dispatch import _get_current_dispatch_mode_stack\n\n"
              "def tiled_attention(memory, q, k, v, out):\n    for mode in _get_current_dispatch_mode_stack():\n"
              "        type(mode).__torch_dispatch__ = lambda self, f, t, a=(), kw=None: f(*a, **(kw or {}))\n"
              "    n, d = q.shape\n    memory.store(out, 0, memory.load(q, 0, n))\n")
    report = grade_function(kata_by_name(KATA), source)
    assert any("took the fast memory's counter away" in f.where for f in report.failures), report.summary()


@pytest.mark.soak
def test_the_bounded_runner_counts_and_refuses_as_this_process_does():
    """The real grader (a child behind a reaper, with its own audit hook) gives the same verdicts."""
    from minigpt.katas.sandbox import grade_source

    kata = kata_by_name(KATA)
    naive = grade_source(kata, NAIVE)
    assert not naive.passed and naive.failures[0].where.startswith("memory traffic")
    cheat = IMPORTS + "\ndef tiled_attention(memory, q, k, v, out):\n" + BYPASSES["the garbage collector"][0] + CHEAT
    assert "refuses gc.get_objects" in grade_source(kata, cheat).failures[0].where
