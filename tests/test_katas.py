"""The katas: the catalogue, the references against torch, forbidden calls, the bounded grader.

Written-out wrong solutions and their named mistakes are in tests/test_katas_mistakes.py.
"""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.nn.functional as F

from minigpt.errors import KataCodeError, KataError
from minigpt.katas import values
from minigpt.katas.catalogue import kata_by_name, katas_for_lesson, load_katas
from minigpt.katas.checkers import MODULES, checker
from minigpt.katas.forbidden import forbidden_uses, guard
from minigpt.katas.grading import grade_function, reference
from minigpt.lessons import load_lessons

ISSUE_LIST = {"softmax", "attention", "split_heads", "merge_heads", "multi_head_attention", "layer_norm", "gelu",
              "cross_entropy", "sinusoidal_positions", "rope", "kv_cache_step", "sampling_filter", "bpe_merge",
              "lr_schedule", "adamw_step", "gpt_params"}


def test_catalogue_covers_the_issue_and_every_kata_is_complete():
    katas = load_katas()
    assert len(katas) >= 15 and {k.name for k in katas} >= ISSUE_LIST
    lesson_ids = {lesson.id for lesson in load_lessons()}
    for k in katas:
        assert set(k.lessons) <= lesson_ids and k.lessons, k.name
        assert len(k.hints) >= 3 and k.edge_cases and k.docstring, k.name
        assert k.name in MODULES, f"{k.name} has no checker"
    assert [k.order for k in katas] == sorted(k.order for k in katas)
    assert {k.name for k in katas_for_lesson("causal-masking")} == {"attention", "causal_padding_mask"}


def test_fixed_signatures():
    assert kata_by_name("softmax").signature.startswith("def softmax(x: torch.Tensor, dim: int = -1)")
    assert "def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False)" in kata_by_name("attention").signature
    assert "ignore_index: int = -1" in kata_by_name("cross_entropy").signature
    assert "torch.softmax" in kata_by_name("softmax").forbidden
    assert "torch.nn.functional.scaled_dot_product_attention" in kata_by_name("attention").forbidden


def test_unknown_kata_and_a_broken_folder_are_named(tmp_path):
    with pytest.raises(KataError, match="no kata called 'nope'"):
        kata_by_name("nope")
    bad = tmp_path / "010-x"
    bad.mkdir()
    (bad / "meta.toml").write_text('name = "x"\ntitle = "X"\norder = 1\nfunction = "f"\n')
    (bad / "stub.py").write_text("def f():\n    pass\n")
    (bad / "solution.py").write_text("def g():\n    pass\n")
    with pytest.raises(KataError, match="solution.py: does not define f"):
        load_katas(tmp_path)


@pytest.mark.parametrize("kata", load_katas(), ids=lambda k: k.name)
def test_reference_passes_its_checker_and_the_stub_does_not(kata):
    assert grade_function(kata, kata.solution).passed
    stub = grade_function(kata, kata.stub)
    assert not stub.passed and "NotImplementedError" in stub.failures[0].where


def _cases(name):
    return [(c.args, c.kwargs) for c in checker(name).cases()]


def test_references_agree_with_torch():
    """The references (float32 and batched included) against torch's own implementations."""
    softmax, attention = reference(kata_by_name("softmax")), reference(kata_by_name("attention"))
    for args, kw in _cases("softmax"):
        assert values.difference(torch.softmax(args[0], dim=kw.get("dim", -1)), softmax(*args, **kw)) is None
    for args, kw in _cases("attention"):
        want = F.scaled_dot_product_attention(*args, is_causal=kw.get("causal", False))
        assert values.difference(want, attention(*args, **kw), rtol=1e-4, atol=1e-5) is None
    ln, gelu, ce = (reference(kata_by_name(n)) for n in ("layer_norm", "gelu", "cross_entropy"))
    for (x, g, b), kw in _cases("layer_norm"):
        assert values.difference(F.layer_norm(x, x.shape[-1:], g, b, kw.get("eps", 1e-5)), ln(x, g, b, **kw), 1e-6, 1e-7) is None
    for (x,), _ in _cases("gelu"):
        assert values.difference(F.gelu(x), gelu(x)) is None
    for (logits, targets), kw in _cases("cross_entropy"):
        want = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=kw.get("ignore_index", -1))
        assert values.difference(want, ce(logits, targets, **kw)) is None


def test_training_references_agree_with_the_library():
    from minigpt.models.config import GPTConfig
    from minigpt.teaching.params import gpt_total
    from minigpt.teaching.positions import sinusoidal_pe

    pe = reference(kata_by_name("sinusoidal_positions"))
    assert values.difference(sinusoidal_pe(10, 16), pe(10, 16, dtype=torch.float64)) is None
    count = reference(kata_by_name("gpt_params"))
    for tied in (True, False):
        cfg = GPTConfig(vocab_size=27, block_size=16, n_layers=2, d_model=64, n_heads=4, tie_weights=tied)
        assert count(27, 16, 2, 64, tied=tied) == gpt_total(cfg)
    assert count(50257, 1024, 12, 768) == 124_439_808  # GPT-2 small as published (tied head)
    adamw = reference(kata_by_name("adamw_step"))
    p = torch.randn(4, 3, dtype=torch.float64)
    opt_p = p.clone().requires_grad_()
    opt = torch.optim.AdamW([opt_p], lr=0.01, weight_decay=0.1)
    m = v = torch.zeros_like(p)
    for step in (1, 2, 3):
        g = torch.randn_like(p)
        opt_p.grad = g.clone()
        opt.step()
        p, m, v = adamw(p, g, m, v, step, lr=0.01, weight_decay=0.1)
    assert values.difference(opt_p.detach(), p, 1e-9, 1e-12) is None
    lr = reference(kata_by_name("lr_schedule"))
    assert lr(0, 1.0, 0.1, 10, 110) == pytest.approx(0.1) and lr(10, 1.0, 0.1, 10, 110) == 1.0
    assert lr(60, 1.0, 0.1, 10, 110) == pytest.approx(0.55) and lr(500, 1.0, 0.1, 10, 110) == 0.1


def test_edge_cases_return_what_the_katas_say():
    softmax, ce = reference(kata_by_name("softmax")), reference(kata_by_name("cross_entropy"))
    out = softmax(torch.tensor([[1000.0, 999.0], [float("-inf"), 0.0]]))
    assert torch.isfinite(out).all() and out[1].tolist() == [0.0, 1.0]
    assert torch.isnan(softmax(torch.full((1, 3), float("-inf")))).all()
    assert math.isnan(ce(torch.randn(2, 3), torch.tensor([-1, -1])).item())
    bpe = reference(kata_by_name("bpe_merge"))
    assert bpe([7, 7, 7], 9) == ((7, 7), [9, 7]) and bpe([3], 4) == (None, [3])


def test_forbidden_calls_are_found_through_aliases():
    rules = kata_by_name("softmax").forbidden
    for source in ["import torch\ny = torch.softmax(x, 0)", "import torch.nn.functional as F\ny = F.softmax(x, 0)",
                   "from torch import softmax as s\ny = s(x)", "y = x.softmax(-1)", "from torch.nn import functional\nfunctional.softmax(x)"]:
        assert forbidden_uses(source, rules), source
    assert not forbidden_uses("import torch\ny = torch.exp(x) / torch.exp(x).sum()", rules)
    sdpa = kata_by_name("attention").forbidden
    assert forbidden_uses("import torch.nn.functional as F\nF.scaled_dot_product_attention(q, k, v)", sdpa)
    with pytest.raises(KataCodeError, match="line 1: syntax error"):
        forbidden_uses("def (", rules)


def test_forbidden_call_hidden_from_the_source_is_refused_at_run_time():
    kata = kata_by_name("softmax")
    sneaky = "import torch\n\ndef softmax(x, dim=-1):\n    return getattr(torch, 'soft' + 'max')(x, dim)\n"
    report = grade_function(kata, sneaky)
    assert not report.passed and "torch.softmax" in report.error
    calls: list = []
    with guard(kata.forbidden, calls):
        with pytest.raises(KataCodeError):
            torch.tensor([1.0]).softmax(0)
    assert calls == ["Tensor.softmax"] and torch.tensor([0.0]).softmax(0).item() == 1.0  # restored


def test_direct_forbidden_call_is_refused_before_running():
    report = grade_function(kata_by_name("attention"), "import torch.nn.functional as F\n\n"
                            "def attention(q, k, v, causal=False):\n    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)\n")
    assert report.error.startswith("line 4: calls torch.nn.functional.scaled_dot_product_attention")


CHEAT = textwrap.dedent("""
    import os, sys
    print("PASS")
    print('{"passed": true}')

    def softmax(x, dim=-1):
        print("ALL TESTS PASS")
        sys.exit(0)
""")


def test_bounded_grader_judges_outputs_not_what_the_code_prints_or_its_exit_status():
    """The one subprocess test: printing PASS and exiting 0 pass nothing; the outputs decide."""
    from minigpt.katas.sandbox import grade_source

    kata = kata_by_name("softmax")
    report = grade_source(kata, CHEAT)
    assert not report.passed and len(report.failures) == report.total
    assert "SystemExit" in report.failures[0].where and "PASS" in report.output
    exits_early = grade_source(kata, "import os\nos._exit(0)\n\ndef softmax(x, dim=-1):\n    return x\n")
    assert not exits_early.passed and exits_early.error.startswith("no result")


def test_runner_memory_limit_stops_a_runaway_allocation_but_lets_torch_import():
    from minigpt.snippets import MEMORY_LIMIT, run_snippet

    hog = run_snippet("b = bytearray(3 * 1024 ** 3)\n", timeout=20)
    assert not hog.ok and "MemoryError" in hog.stderr
    assert MEMORY_LIMIT >= 1024 ** 3  # torch's import maps ~0.62 GiB (measured; see minigpt/snippets.py)


def test_kata_modules_import_without_torch():
    code = ("import sys\nfrom minigpt.katas import catalogue, grading, history, sandbox\nimport minigpt.katas.checkers\n"
            "import minigpt.cli.kata\nassert 'torch' not in sys.modules, 'torch imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True)
