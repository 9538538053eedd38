"""Numbers corrected by issue 25's audit, each pinned against an independent computation."""

import struct

import pytest

from minigpt.teaching import precision as P


def _bfloat16_by_hand(x: float) -> float:
    """Round a float32 to bfloat16 by keeping its top 16 bits (round to nearest even)."""
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    bits += 0x7FFF + ((bits >> 16) & 1)
    return struct.unpack("<f", struct.pack("<I", (bits >> 16) << 16))[0]


def test_the_two_losses_of_the_bf16_example_do_collapse():
    a, b = 1.947, 1.949
    assert _bfloat16_by_hand(a) == _bfloat16_by_hand(b) == 1.9453125
    assert P.stored_as(a, "bfloat16") == P.stored_as(b, "bfloat16") == 1.9453125
    # the old pair did not: one step of bfloat16 lies between them
    assert _bfloat16_by_hand(1.947) != _bfloat16_by_hand(1.951)


def test_the_example_prints_one_value_for_both():
    from minigpt.teaching.examples import catalog  # noqa: F401 (registers every example)
    from minigpt.teaching.examples.registry import render_example as render

    text = render("precision.loss_in_fp32")
    assert "1.947 and 1.949" in text and "become 1.94531 and 1.94531" in text


def _scalar_steps(step, level, sigma=0.01):
    """Steps a scalar Newton–Schulz map needs to lift a singular value past ``level``."""
    norm = (1 + sigma * sigma) ** 0.5  # the iterations start from G / ‖G‖ (Frobenius)
    s, n = sigma / norm, 0
    while s <= level:
        s, n = step(s), n + 1
    return n


def test_muon_example_names_the_quintic_and_the_cubic():
    import torch

    from minigpt.teaching.examples import catalog  # noqa: F401 (registers every example)
    from minigpt.teaching.examples.registry import render_example
    from minigpt.training.muon import NS_COEFFICIENTS, orthogonalize_cubic

    a, b, c = NS_COEFFICIENTS
    cubic = _scalar_steps(lambda s: 1.5 * s - 0.5 * s ** 3, 0.99)
    quintic = _scalar_steps(lambda s: a * s + b * s ** 3 + c * s ** 5, 0.7)
    text = render_example("training.muon")
    assert "3.4445, -4.775, 2.0315" in text
    assert f"needs {cubic} cubic steps" in text and f"passes 0.7 after {quintic}" in text
    g = torch.tensor([[3.0, 0.0], [4.0, 5.0]], dtype=torch.float64)
    u, _s, vh = torch.linalg.svd(g)
    assert torch.allclose(orthogonalize_cubic(g, steps=30), u @ vh, atol=1e-9)


def test_cards_fixed_by_the_audit_say_the_right_thing():
    from minigpt.study import numeric
    from minigpt.study.decks import load_decks

    deck = load_decks()
    clip = deck["term.gradient-clipping"].definition
    assert "derivatives" in clip and "update" not in clip
    assert "made one" not in deck["term.muon"].definition
    rope = deck["q.rope-identity"]
    assert "n − m" in rope.front and "q, k" in rope.short
    init = numeric.generate("init_loss", {"vocab": 50257}).prompt  # the note draws its vocabulary
    assert "50,257 entries" in init and "characters." not in init


def test_position_interpolation_ends_a_fraction_of_a_step_past_the_trained_range():
    from minigpt.teaching.long_context import rope_angles

    trained, s, head_dim = 64, 4, 16
    last = rope_angles(s * trained - 1, head_dim, interpolation=s)
    edge = rope_angles(trained - 1, head_dim)
    step = rope_angles(1, head_dim)
    past = (last - edge) / step  # how far past the last trained position, in positions
    assert float(past[0]) == (s * trained - 1) / s - (trained - 1) == 0.75


def test_speculative_sampling_rule_keeps_the_large_models_distribution():
    """Accept x with min(1, p/q); on a rejection resample from norm(max(0, p − q)): the
    output is distributed as p exactly (enumerated, not sampled)."""
    p = [0.5, 0.3, 0.2]
    q = [0.2, 0.2, 0.6]
    accept = [min(1.0, pi / qi) for pi, qi in zip(p, q)]
    rejected = 1 - sum(qi * a for qi, a in zip(q, accept))
    residual = [max(0.0, pi - qi) for pi, qi in zip(p, q)]
    out = [qi * a + rejected * r / sum(residual) for qi, a, r in zip(q, accept, residual)]
    assert out == pytest.approx(p)


def test_the_course_slip_is_named_at_its_reshape():
    from minigpt.lessons import load_lessons

    text = next(lesson for lesson in load_lessons() if lesson.id == "mini-gpt").body
    assert "`targets.view(B*T)`, before any loss" in text


def test_llama2_7b_rows_add_up_to_the_stated_total():
    from minigpt.teaching.examples import catalog  # noqa: F401 (registers every example)
    from minigpt.teaching.examples.registry import render_example

    rows = [line.split("|")[1:3] for line in render_example("params.llama2_7b").splitlines()
            if line.startswith("| ") and "piece" not in line]
    values = {name.strip(): int(v.strip().strip("*").replace(",", "")) for name, v in rows}
    total = values.pop("**exact total**")
    d, L, V, ff = 4096, 32, 32000, 11008  # Touvron et al. 2023, counted by hand
    assert total == L * (4 * d * d + 3 * d * ff + 2 * d) + 2 * V * d + d == 6_738_415_616
    parts = [v for k, v in values.items() if k not in ("12·L·d²",) and "per layer" not in k]
    assert sum(parts) == total


def test_moe_example_numbers_agree_with_the_loss_they_explain():
    """Recompute E·Σ f·P from the printed table alone: f from the first choices, P from the
    printed (rounded) probabilities."""
    import re

    from minigpt.teaching.examples import catalog  # noqa: F401 (registers every example)
    from minigpt.teaching.examples.registry import render_example

    text = render_example("moe.routing")
    rows = [line.split("|")[2:4] for line in text.splitlines() if re.match(r"\| t\d", line)]
    probs = [[float(p) for p in cell.split()] for cell, _ in rows]
    firsts = [int(re.match(r"\s*e(\d)", used).group(1)) for _, used in rows]
    E, n = 4, len(rows)
    f = [firsts.count(e) / n for e in range(E)]
    P = [sum(p[e] for p in probs) / n for e in range(E)]
    loss = E * sum(fe * pe for fe, pe in zip(f, P))
    printed = float(re.search(r"E·Σ f·P = ([\d.]+)", text).group(1))
    assert abs(loss - printed) < 0.02
    assert f"first choices per expert {[firsts.count(e) for e in range(E)]}" in text
