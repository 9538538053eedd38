"""Worked examples: the registry, and the numbers pinned against values worked by hand."""

from __future__ import annotations

import math

import pytest
import torch

from minigpt.teaching import attention, norms, positions
from minigpt.teaching.examples import catalog, registry, scale
from minigpt.teaching.examples.model import name_pair, residual_gradients


def row(tensor_row, digits=3):
    return [round(v, digits) for v in tensor_row.tolist()]


def test_every_example_renders_markdown():
    ids = catalog.example_ids()
    assert len(ids) >= 30 and ids == sorted(ids)
    for ex_id in ids:
        md = catalog.render_example(ex_id)
        assert md.startswith("**") and md.strip(), ex_id
        assert "nan" not in md.lower(), ex_id
        for line in md.splitlines():
            if line.startswith("|"):
                assert len(line) <= 78, f"{ex_id}: table row too wide for 80 columns: {line}"


def test_unknown_example_is_a_clear_keyerror():
    with pytest.raises(KeyError, match="unknown example id 'nope'.*attention.course.weights"):
        catalog.render_example("nope")


def test_registering_twice_fails():
    with pytest.raises(ValueError, match="twice"):
        registry.example("norm.layernorm", "again")(lambda: "")


# --- the course's 4-token example ------------------------------------------------------------


def test_course_unscaled_weights_and_output():
    tr = attention.run_preset(attention.COURSE_EXAMPLE, scale=False)
    assert row(tr.weights[0]) == [0.124, 0.336, 0.336, 0.204]
    assert row(tr.weights[2]) == [0.175, 0.175, 0.475, 0.175]
    assert row(tr.output[0]) == [0.562, 1.336]
    md = catalog.render_example("attention.course.weights")
    assert "| **the** | 0.124 | 0.336 | 0.336 | 0.204 |" in md
    assert "[0.562, 1.336]" in catalog.render_example("attention.course.output")


def test_course_scaled_weights_including_the_corrected_row():
    tr = attention.run_preset(attention.COURSE_EXAMPLE, scale=True)
    assert tr.scale == pytest.approx(math.sqrt(2))
    assert row(tr.weights[0]) == [0.154, 0.313, 0.313, 0.220]
    assert row(tr.weights[2]) == [0.199, 0.199, 0.403, 0.199]
    # The course prints .218 .218 .346 .218 here; worked by hand: e^0.354 = 1.424,
    # e^0.707 = 2.028, sum = 6.30, so 1.424/6.30 = .226 and 2.028/6.30 = .322.
    assert row(tr.weights[3]) == [0.226, 0.226, 0.322, 0.226]
    md = catalog.render_example("attention.course.scaled_weights")
    assert "| **down** | 0.226 | 0.226 | 0.322 | 0.226 |" in md
    assert "0.218 0.218 0.346 0.218" in md  # the lesson names the course's differing value


def test_course_causal_first_row_is_its_own_value():
    md = catalog.render_example("attention.course.causal")
    assert "| **the** | 1.000 | 0.000 | 0.000 | 0.000 |" in md
    assert "[1.0, 1.0]" in md


# --- scaling ---------------------------------------------------------------------------------


def test_scaling_demo_std_grows_like_sqrt_dk():
    s = attention.scaling_demo(64, trials=2000, seed=0)
    assert s.std_raw == pytest.approx(8, rel=0.05)
    assert s.std_scaled == pytest.approx(1, rel=0.05)
    assert s.max_weight_raw > 0.8 > 0.4 > s.max_weight_scaled


# --- norms and positions ---------------------------------------------------------------------


def test_layernorm_of_2468():
    assert row(norms.layer_norm([2.0, 4.0, 6.0, 8.0])) == [-1.342, -0.447, 0.447, 1.342]
    assert "[-1.342, -0.447, 0.447, 1.342]" in catalog.render_example("norm.layernorm")


def test_rmsnorm_of_2468():
    # RMS = sqrt((4 + 16 + 36 + 64) / 4) = sqrt(30) = 5.477
    assert row(norms.rms_norm([2.0, 4.0, 6.0, 8.0])) == [0.365, 0.730, 1.095, 1.461]


def test_sinusoidal_pe_d4():
    pe = positions.sinusoidal_pe(4, 4)
    assert row(pe[0]) == [0.0, 1.0, 0.0, 1.0]
    assert row(pe[1]) == [0.841, 0.540, 0.010, 1.000]
    assert row(pe[2]) == [0.909, -0.416, 0.020, 1.000]
    assert row(pe[3]) == [0.141, -0.990, 0.030, 1.000]
    assert "| **pos 1** | 0.841 | 0.540 | 0.010 | 1.000 |" in catalog.render_example("pe.sinusoidal.d4")


def test_rope_relative_identity_holds():
    md = catalog.render_example("pe.rope.identity")
    lines = [l for l in md.splitlines() if l.startswith("| ") and l[2].isdigit()]
    assert len(lines) == 5
    for line in lines:
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[3] == cells[4]


# --- parameter counts ------------------------------------------------------------------------


def test_gpt2_small_count():
    md = catalog.render_example("params.gpt2_small")
    assert "**124,439,808**" in md
    assert "84,934,656" in md


def test_llama2_7b_count():
    md = catalog.render_example("params.llama2_7b")
    # 12·32·4096² and the exact count with SwiGLU (3·4096·11008), RMSNorm, untied 32,000 vocab.
    assert "6,442,450,944" in md
    exact = 32 * (4 * 4096**2 + 3 * 4096 * 11008 + 2 * 4096) + 4096 + 2 * 32000 * 4096
    assert exact == 6_738_415_616
    assert f"{exact:,}" in md


def test_course_mini_gpt_count_reconciles_with_course():
    # The course's own breakdown adds up to 204,827 for vocab 27, d 64, 4 layers, 32 positions.
    assert "204,827" in catalog.render_example("params.mini_gpt")


def test_mha_projection_counts():
    md = catalog.render_example("params.mha")
    # d = 512: W_Q, W_K, W_V 3·512² = 786,432; W_O 512² = 262,144 with one head as with eight.
    assert "| 1 head of 512 | 786,432 | 262,144 | 1,048,576 |" in md
    assert "| 8 heads of 64 | 786,432 | 262,144 | 1,048,576 |" in md
    assert "—" not in md


def test_comparison_param_counts():
    md = catalog.render_example("comparison.course")
    assert "| bigram (counts) | 729 |" in md
    assert "3.30" in md  # ln 27


# --- training, sampling, inference -----------------------------------------------------------


def test_lr_schedule_endpoints():
    assert scale.lr_at(0) == pytest.approx(3e-4 / 500)
    assert scale.lr_at(499) == pytest.approx(3e-4)
    assert scale.lr_at(10000) == pytest.approx(3e-5)
    steps = [scale.lr_at(s) for s in range(500, 10000, 250)]
    assert all(a >= b for a, b in zip(steps, steps[1:]))


def test_packed_row_worked_by_hand():
    md = catalog.render_example("data.packed_row")
    # ".ava" then ".bo" fill 7 of the 8 places; positions restart at the second start token
    assert "| input | . | a | v | a | . | b | o |" in md
    assert "| target | a | v | a | . | b | o | . |" in md
    assert "| position | 0 | 1 | 2 | 3 | 0 | 1 | 2 |" in md
    # query 4 (the second '.') sees only itself; query 6 sees 4, 5, 6 and nothing of "ava"
    assert "| 4 . | 0 | 0 | 0 | 0 | 1 | 0 | 0 |" in md and "| 6 o | 0 | 0 | 0 | 0 | 1 | 1 | 1 |" in md
    assert "| 3 a | 1 | 1 | 1 | 1 | 0 | 0 | 0 |" in md


def test_weight_average_worked_by_hand():
    md = catalog.render_example("training.weight_average")
    # warm-up: min(0.999, (1 + n) / (10 + n)) at n = 0, 10, 100
    assert "| 0 | 0.100 |" in md and "| 10 | 0.550 |" in md and "| 100 | 0.918 |" in md
    # 0.9·3.5 + 0.1·2.5 = 3.4; 0.9·3.4 + 0.1·3.5 = 3.41; 0.9·3.41 + 0.1·2.5 = 3.319
    assert "| 1 | 2.500 | 3.400 |" in md and "| 2 | 3.500 | 3.410 |" in md and "| 3 | 2.500 | 3.319 |" in md
    # after 40 steps: steady swing 3 ± 0.5·0.1/1.9 = 3.026, plus (3.5 − 3.026)·0.9⁴⁰ = 0.007 left from the start
    assert "| 40 | 3.500 | 3.033 |" in md and "0.033 away" in md


def test_clipping_scales_by_one_fifth():
    assert "[0.600, 0.800]" in catalog.render_example("training.clipping")


def test_muon_example_worked_by_hand():
    md = catalog.render_example("training.muon")
    # GᵀG = [[25, 20], [20, 25]]: eigenvalues 45 and 5, so singular values √45 = 6.708 and √5 = 2.236.
    assert "6.708, 2.236" in md and "3.0×" in md
    # U·Vᵀ = G·(GᵀG)^(-1/2) = [[2, -1], [1, 2]] / √5: a rotation by 26.57°
    assert "| 0.894, -0.447 | 0.447, 0.894 | 1, 1 |" in md
    quintic = md.split("tuned quintic ×5")[1].split("\n")[0]
    values = [float(v) for v in quintic.split("|")[-2].split(",")]
    assert all(0.6 < v < 1.25 for v in values) and not all(abs(v - 1) < 0.01 for v in values)  # near 1, not on it
    cubic = md.split("textbook cubic ×5")[1].split("\n")[0]
    assert all(abs(float(v) - 1) < 0.01 for v in cubic.split("|")[-2].split(","))  # the cubic converges to U·Vᵀ
    assert "3.4445, -4.775, 2.0315" in md  # the tuned coefficients are named


def test_top_p_example_reads_unambiguously():
    # By hand: e^2, e^1.5, e^0.5, e^0, e^-1, e^-2 sum to 15.0227; p = 0.4919, 0.2983, 0.1097, ...
    # running totals 0.4919, 0.7902, 0.8999: with top-p 0.8, a, e and i are kept (mass 0.8999),
    # so a becomes 0.4919 / 0.8999 = 0.547.
    md = catalog.render_example("sampling.topk_topp")
    assert "| a | 0.492 | 0.622 | 0.547 |" in md and "| o | 0.067 | 0.000 | 0.000 |" in md
    assert "0.492 0.790 0.900" in md and "top-p keeps 3 characters" in md


def test_top_k_and_top_p():
    p = torch.tensor([0.5, 0.3, 0.15, 0.05], dtype=torch.float64)
    assert scale.top_k_probs(p, 2).tolist() == pytest.approx([0.625, 0.375, 0, 0])
    assert scale.top_p_probs(p, 0.9).tolist() == pytest.approx([0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0])
    # the most likely token is always kept, even when it alone exceeds top_p
    assert scale.top_p_probs(p, 0.1).tolist() == pytest.approx([1, 0, 0, 0])


def test_residual_keeps_gradient_alive():
    plain, skip = residual_gradients(30)
    assert plain < 1e-6 < 1 < skip


def test_name_pair_shifts_by_one_and_pads():
    x, y = name_pair("ava", 6)
    assert x == [".", "a", "v", "a", "·", "·"]
    assert y == ["a", "v", "a", ".", "—", "—"]
