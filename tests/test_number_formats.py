"""The lesson on number formats (issue 51) and the ``ptq`` lab job (issue 52, item 3): every
figure the lesson shows pinned against torch's own float8 types, the published specs' and papers'
values, or a value worked by hand; GPTQ's claim (no larger a layer error than rounding) on a
cut-down run; the lesson's place, its typed figures and its reading of the bundled result."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from minigpt import lessons
from minigpt.models import gptq
from minigpt.models.quantize import QuantConfig, round_trip
from minigpt.teaching import kv_memory, number_formats, ptq, ptq_shipped
from minigpt.teaching.examples.catalog import render_example

ROOT = Path(__file__).resolve().parents[1]
LESSON = ROOT / "lessons" / "chapters" / "234-number-formats.md"
BUNDLED = ROOT / "lessons" / "lab" / "ptq" / "result.json"

# bitsandbytes' NF4 table (functional.py, get_4bit_type("nf4")), the values QLoRA ships.
PUBLISHED_NF4 = (-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
                 -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
                 0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224,
                 0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0)


@pytest.fixture(autouse=True)
def _one_thread():
    """Tensors this small run many times slower on two threads when the cores are busy."""
    from minigpt.training.cpu_policy import one_thread

    with one_thread():
        yield


# --- the formats, decoded ----------------------------------------------------------------------


def test_fp8_ranges_match_the_paper_and_torch():
    e4, e5 = number_formats.format_range(number_formats.E4M3), number_formats.format_range(number_formats.E5M2)
    # Micikevicius et al. 2022, table 1
    assert (e4.largest, e4.smallest_normal, e4.smallest_subnormal) == (448.0, 2.0 ** -6, 2.0 ** -9)
    assert (e5.largest, e5.smallest_normal, e5.smallest_subnormal) == (57344.0, 2.0 ** -14, 2.0 ** -16)
    assert e4.largest == torch.finfo(torch.float8_e4m3fn).max
    assert e5.largest == torch.finfo(torch.float8_e5m2).max
    assert e4.smallest_normal == torch.finfo(torch.float8_e4m3fn).tiny
    # 256 patterns: E4M3 loses ±NaN and one zero; E5M2 ±inf, 6 NaNs and one zero
    assert (e4.finite_values, e5.finite_values) == (253, 247)


def test_the_decoder_reproduces_float16():
    r = number_formats.format_range(number_formats.FP16)
    fi = torch.finfo(torch.float16)
    assert (r.largest, r.smallest_normal, r.smallest_subnormal) == (fi.max, fi.tiny, fi.smallest_normal * fi.eps)


def test_e2m1_and_e8m0_are_the_mx_spec_values():
    # OCP MX v1.0, section 5.3.3: FP4 E2M1 magnitudes
    assert [v for v in number_formats.values(number_formats.E2M1) if v >= 0] == [0, 0.5, 1, 1.5, 2, 3, 4, 6]
    assert number_formats.e8m0_range() == (2.0 ** -127, 2.0 ** 127)


@pytest.mark.parametrize("fmt,dtype", [(number_formats.E4M3, torch.float8_e4m3fn), (number_formats.E5M2, torch.float8_e5m2)])
def test_rounding_matches_torchs_float8_cast_including_ties(fmt, dtype):
    grid = torch.tensor(number_formats.values(fmt), dtype=torch.float64)
    midpoints = (grid[1:] + grid[:-1]) / 2  # exact ties: round half to even
    x = torch.cat([grid, midpoints, torch.linspace(-grid[-1], grid[-1], 4001, dtype=torch.float64)])
    assert torch.equal(number_formats.round_to_format(x, fmt), x.to(dtype).double())


def test_mx_block_worked_by_hand():
    block = torch.zeros(32, dtype=torch.float64)
    block[:3] = torch.tensor([1.0, 0.1, -0.3])
    # amax 1 → shared exponent floor(log2 1) − 2 = −2, scale 1/4: 4, 0.4 → 0.5, −1.2 → −1
    assert number_formats.mx_round_trip(block)[:3].tolist() == [1.0, 0.125, -0.25]
    block[0] = 1.9  # 1.9 / (1/4) = 7.6: saturates to 6, read back 1.5
    assert number_formats.mx_round_trip(block)[0].item() == 1.5


def test_nvfp4_block_worked_by_hand():
    block = torch.zeros(16, dtype=torch.float64)
    block[:3] = torch.tensor([3.0, 1.0, 0.2])
    # per tensor 3 / (448·6); block scale (3/6) / that = 448, exact in E4M3 → scale 0.5:
    # 6 → 3, 2 → 1, 0.4 → 0.5 → 0.25
    assert number_formats.nvfp4_round_trip(block)[:3].tolist() == pytest.approx([3.0, 1.0, 0.25])


def test_nf4_levels_are_qloras_published_table():
    assert number_formats.nf4_offset() == pytest.approx(0.9677083, abs=5e-7)
    assert number_formats.nf4_levels() == pytest.approx(PUBLISHED_NF4, abs=1e-6)  # theirs: float32 linspace


def test_bits_per_weight_by_hand():
    assert ptq.qlora_bits_per_weight(double_quant=False) == 4.5  # 4 + 32/64
    assert ptq.qlora_bits_per_weight() == 4 + 8 / 64 + 32 / (64 * 256)
    assert round(ptq.qlora_bits_per_weight(), 3) == 4.127
    assert number_formats.bits_per_value(4, 32, 8, 1024) == 4.25  # MXFP4
    assert number_formats.bits_per_value(4, 16, 8, 1024, 32) == 4.5 + 32 / 1024  # NVFP4


def test_block_scales_rescue_the_small_values_where_the_lesson_says():
    from minigpt.teaching.examples.number_formats import others_error

    def e4m3(x, block):
        return number_formats.scaled_round_trip(x, number_formats.E4M3, block)

    def int8(x, block):
        return number_formats.int_round_trip(x, 8, block)

    assert others_error(1e5, e4m3, None) > 3 * others_error(1e5, e4m3, 32)  # into the subnormals
    assert others_error(1e3, e4m3, None) < 1.2 * others_error(1e3, e4m3, 32)  # still normal
    assert others_error(1e3, int8, None) == 1.0  # every small value rounds to 0


def test_smoothquant_keeps_the_product_and_balances_at_one_half():
    from minigpt.teaching.examples.number_formats import OUTLIER_CHANNEL, smoothquant_example

    x, w = smoothquant_example()
    s = number_formats.smoothing_factors(x, w, 0.5)
    j = OUTLIER_CHANNEL
    assert s[j].item() == pytest.approx(math.sqrt(x[:, j].abs().max() / w[:, j].abs().max()))
    assert torch.allclose((x / s) @ (w * s).T, x @ w.T, atol=1e-6)
    # at α = 1/2 the channel's activation range and weight range meet: √(max|X| · max|W|)
    assert (x[:, j] / s[j]).abs().max() == pytest.approx((w[:, j] * s[j]).abs().max())
    errors = {a: number_formats.int8_product_error(x / number_formats.smoothing_factors(x, w, a), w * number_formats.smoothing_factors(x, w, a))
              for a in (0.0, 0.5, 1.0)}
    assert errors[0.5] < min(errors[0.0], errors[1.0])


def test_kv_cache_bytes_per_token_by_hand():
    llama7 = next(s for s in kv_memory.MODELS if s.name == "LLaMA-2 7B")
    per_16 = kv_memory.shape_bytes_per_token(llama7)
    assert per_16 == 2 * 32 * 32 * 128 * 2 == 512 * 1024
    assert per_16 * ptq.kv_bits_per_value(8) / 16 == 256 * 1024
    assert per_16 * ptq.kv_bits_per_value(4, 64) / 16 == 136 * 1024  # 4.25 bits


# --- GPTQ ----------------------------------------------------------------------------------------


def test_round_to_nearest_is_lesson_237s_group_quantization():
    w = torch.randn(8, 64, generator=torch.Generator().manual_seed(0))
    assert torch.allclose(gptq.round_to_nearest(w, 4, 32), round_trip(w, QuantConfig(4, "group", 32)), atol=1e-6)


def test_gptq_with_uncorrelated_inputs_is_round_to_nearest():
    """With a diagonal Hessian no column's error can be paid back by another: GPTQ rounds each
    weight to nearest, exactly."""
    w = torch.randn(6, 32, generator=torch.Generator().manual_seed(1))
    h = torch.diag(torch.rand(32, generator=torch.Generator().manual_seed(2), dtype=torch.float64) + 0.5)
    assert torch.equal(gptq.gptq(w, h, 3, 16), gptq.round_to_nearest(w, 3, 16))


@pytest.fixture(scope="module")
def cut_down():
    """The shipped model with 32 calibration names and 64 to score on."""
    return ptq_shipped.load(calibration_names=32, held_out_names=64)


@pytest.mark.parametrize("bits", [4, 3])
def test_gptq_layer_error_is_below_rounding_on_the_shipped_model(cut_down, bits):
    _, errors = ptq_shipped.gptq_model(cut_down.model, cut_down.calibration, bits, layers=3)
    assert [e.layer for e in errors] == ["blocks.0.attn.qkv", "blocks.0.attn.proj", "blocks.0.ffn.up"]
    for e in errors:
        assert e.gptq < e.rtn, e


def test_stored_bytes_agree_with_lesson_237s_count(cut_down):
    from minigpt.models.quantize import quantize_model

    _, counted = quantize_model(cut_down.model, QuantConfig(4, "group", 32))
    assert ptq_shipped.stored_bytes(cut_down.model, ptq_shipped.int_bits(4, 32)) == pytest.approx(counted.quant_bytes, abs=32)
    assert ptq_shipped.stored_bytes(cut_down.model, lambda p: 32) == counted.float_bytes


@pytest.mark.soak
def test_the_whole_job_on_the_shipped_model():
    result = ptq_shipped.measure(progress=lambda line: None)
    rows = {r["label"]: r for r in result["rows"]}
    assert rows["int3 groups of 32, GPTQ"]["loss"] < rows["int3 groups of 32, RTN"]["loss"]
    assert all(e["gptq"] < e["rtn"] for errors in result["layer_errors"].values() for e in errors)


# --- the lesson ----------------------------------------------------------------------------------


def test_the_lesson_sits_between_moe_and_after_pretraining_with_its_lab_job():
    lesson = next(lesson for lesson in lessons.load_lessons() if lesson.id == "number-formats")
    assert lesson.order == 234 and lesson.extra["lab"] == ["ptq"]
    assert lesson.snippets() and "formats.ptq_lab" in lesson.example_ids()


def test_the_lessons_typed_figures_are_the_calculators():
    text = " ".join(LESSON.read_text(encoding="utf-8").split())
    e4, e5 = number_formats.format_range(number_formats.E4M3), number_formats.format_range(number_formats.E5M2)
    step = {f.name: min(v for v in number_formats.values(f) if v > 1) - 1 for f in (number_formats.E4M3, number_formats.E5M2)}
    assert f"tops at {e4.largest:g} with steps of 1/{1 / step['E4M3']:g}" in text
    assert f"reaches {e5.largest:,g} with steps of 1/{1 / step['E5M2']:g}" in text
    assert f"{number_formats.bits_per_value(4, number_formats.MX_BLOCK, 8, 1 << 20):g} bits" in text
    assert f"about {round(ptq.qlora_bits_per_weight(), 3)} bits per parameter" in text
    assert f"about {round(number_formats.bits_per_value(4, number_formats.NVFP4_BLOCK, 8, 1 << 20, 32), 1)} bits" in text
    assert len(number_formats.values(number_formats.E2M1)) == 15 and "fifteen distinct values" in text


def test_the_cards_figures_are_the_calculators():
    from minigpt.study.decks import load_decks

    cards = load_decks(numbers=False)
    e4, e5 = number_formats.format_range(number_formats.E4M3), number_formats.format_range(number_formats.E5M2)
    assert f"largest value is {e4.largest:g}" in cards["term.e4m3"].back
    assert f"reaching {e5.largest:,g}" in cards["term.e5m2"].back
    double_quant = (f"about {round(ptq.qlora_bits_per_weight(), 3)} bits per weight instead of "
                    f"{ptq.qlora_bits_per_weight(double_quant=False):g}")
    assert double_quant in cards["term.double-quantization"].back
    assert f"1.75 × 2^(30 − 15) = {e5.largest:,g}" in cards["q.e4m3-448"].back
    assert f"below E4M3's smallest normal (2^{math.log2(e4.smallest_normal):.0f})" in cards["q.block-scales"].back


def test_the_examples_show_the_calculators_numbers():
    ranges = render_example("formats.fp8_ranges")
    assert "| E4M3 (8 bits) | 448 | 2^-6 | 2^-9 | 0.125 | 253 |" in ranges
    assert "| E5M2 (8 bits) | 57,344 | 2^-14 | 2^-16 | 0.250 | 247 |" in ranges
    assert "1.75 × 2^8" in ranges and "1.75 × 2^15" in ranges
    assert "4 + 8/64 + 32/(64·256) = 4.127" in render_example("formats.double_quant")
    assert "| LLaMA-2 7B | int4, fp16 scale per 64 | 4.25 | 136 KiB |" in render_example("formats.kv_cache")
    assert "-0.6962" in render_example("formats.nf4")


def test_the_lab_example_shows_the_bundled_result_then_the_learners(tmp_path):
    from minigpt.runs.lab import job_dir, write_result

    shown = render_example("formats.ptq_lab")
    assert "bundled" in shown and "minigpt lab run ptq" in shown and "| float32 |" in shown
    own = json.loads(BUNDLED.read_text(encoding="utf-8"))
    own["rows"][1]["loss"] = 2.5
    write_result(job_dir("ptq"), {k: v for k, v in own.items() if k not in ("format", "format_version")})
    shown = render_example("formats.ptq_lab")
    assert shown.count("Your run.") == 1 and "| 2.5000 |" in shown
    (job_dir("ptq") / "result.json").write_text("{not json", encoding="utf-8")
    shown = render_example("formats.ptq_lab")
    assert "cannot be read" in shown and "| float32 |" in shown and "| 2.5000 |" not in shown


def test_the_lessons_reading_of_the_bundled_result_holds():
    result = json.loads(BUNDLED.read_text(encoding="utf-8"))
    assert result["format"] == "minigpt-lab-result" and result["job"] == "ptq"
    loss = {r["label"]: r["loss"] for r in result["rows"]}
    rise = {bits: loss[f"int{bits} groups of 32, RTN"] - loss[f"int{bits} groups of 32, GPTQ"] for bits in (4, 3)}
    assert 0 < rise[4] < rise[3]  # GPTQ helps, most at 3 bits
    assert loss["FP8 E4M3, per tensor"] < loss["FP8 E5M2, per tensor"]
    mx = loss["MXFP4 (E2M1, E8M0 per 32)"]
    assert loss["NVFP4 (E2M1, E4M3 per 16)"] < mx and loss["NF4, float32 absmax per 64"] < mx
    assert all(e["gptq"] < e["rtn"] for errors in result["layer_errors"].values() for e in errors)
