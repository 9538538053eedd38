"""The lessons on what does not fit a laptop (issue 35): their maths pinned against values worked
by hand, their place in the track, and their cards and chapter quizzes."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from minigpt import lessons as L
from minigpt.study import numeric
from minigpt.study.decks import load_decks
from minigpt.study.quiz import chapter_quiz
from minigpt.teaching import attention_variants, decoding, flash_io, parallelism, rl_maths, serving, state_space
from minigpt.teaching.examples.catalog import render_example

SCALE_OUT = {"parallelism": 177, "serving": 208}  # lesson id → its place in the track (order)
SECTIONS = {"flash-attention", "after-pretraining", "sampling", "kv-memory-gqa"}  # older lessons that gained a section and cards from this deck
DECK = Path(__file__).resolve().parents[1] / "lessons" / "decks" / "scale-out.toml"


# --- parallelism ---------------------------------------------------------------------------


def test_mixed_precision_adam_is_sixteen_bytes_per_parameter():
    assert (parallelism.WEIGHT_BYTES, parallelism.GRADIENT_BYTES, parallelism.OPTIMIZER_BYTES) == (2, 2, 12)


@pytest.mark.parametrize("stage,gb", [
    ("data parallel", 112.0),                      # 7e9 · 16
    ("ZeRO-1", 38.5),                              # 7e9 · (2 + 2) + 7e9 · 12 / 8 = 28 + 10.5
    ("ZeRO-2 / FSDP SHARD_GRAD_OP", 26.25),        # 14 + 7e9 · (2 + 12) / 8 = 14 + 12.25
    ("ZeRO-3 / FSDP FULL_SHARD", 14.0),            # 112 / 8
])
def test_seven_billion_on_eight_gpus_by_hand(stage, gb):
    assert parallelism.memory_per_device(7e9, 8, stage).total / 1e9 == pytest.approx(gb)


def test_zero_papers_own_example_7_5b_on_64_gpus():
    # Rajbhandari et al. 2020, figure 1: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB
    got = [parallelism.memory_per_device(7.5e9, 64, s).total / 1e9 for s in parallelism.STAGES]
    assert [round(g, 1) for g in got] == [120.0, 31.4, 16.6, 1.9]


def test_ring_all_reduce_and_tensor_parallel_traffic_by_hand():
    assert parallelism.ring_all_reduce_bytes_sent(100, 4) == pytest.approx(150)  # 2 · 3/4 · 100
    tr = parallelism.tensor_parallel_traffic(batch=1, seq=4096, d_model=4096, t=2)
    assert tr.activation_bytes == 32 * 2**20           # 4096 · 4096 · 2 bytes
    assert tr.all_reduces == 4
    assert tr.sent_per_device == 4 * 32 * 2**20        # 2 · (1/2) · 32 MiB, four times
    assert "| 8 | 32 | 4 | 224 | 7.0 |" in render_example("parallel.tensor_traffic")


@pytest.mark.parametrize("p,m,expected", [(4, 1, 0.75), (4, 4, 3 / 7), (4, 12, 0.2),
                                          (8, 32, 7 / 39)])
def test_bubble_formula_and_the_counted_schedule_agree(p, m, expected):
    assert parallelism.bubble_fraction(p, m) == pytest.approx(expected)
    assert parallelism.idle_share(parallelism.pipeline_schedule(p, m)) == pytest.approx(expected)


def test_schedule_picture_by_hand():
    assert parallelism.pipeline_schedule(3, 2) == ["12..", ".12.", "..12"]


def test_zero_example_and_numeric_cards_show_the_hand_values():
    md = render_example("parallel.zero_memory")
    assert "| ZeRO-1 | 14.00 | 14.00 | 10.50 | 38.50 |" in md
    assert "ZeRO-3 / FSDP FULL_SHARD: 17.50 GB" in md     # 70e9 · 16 / 64
    item = numeric.generate("zero_memory", {"params": 7e9, "devices": 8, "stage": "ZeRO-1"})
    assert item.value == pytest.approx(38.5)
    assert numeric.generate("pipeline_bubble", {"p": 4, "m": 12}).value == pytest.approx(0.2)


# --- serving -------------------------------------------------------------------------------


def test_paged_and_contiguous_reservations_by_hand():
    whole, pages = serving.contiguous(serving.REQUEST_MIX), serving.paged(serving.REQUEST_MIX)
    assert whole.used == pages.used == 5310
    assert whole.reserved == 10 * 2048
    # 192 + 96 + 624 + 240 + 1328 + 80 + 416 + 160 + 1904 + 336: each rounded up to 16
    assert pages.reserved == 5376
    md = render_example("serving.paged")
    assert "74.1%" in md and "1.2%" in md
    # 40 GiB / 512 KiB = 81,920 slots: 81,920 / 2,048 = 40; 81,920 / 537.6 = 152.4
    assert "40 requests fit" in md and "152 of this mix" in md


def test_tiny_schedule_worked_step_by_step():
    # 2 slots. Static: A and B start at 0, the batch lasts 4 steps; C and D start at 4.
    # Continuous: B leaves after step 0, C joins at 1; C ends at 3, D joins and ends at 4.
    reqs = (serving.Request("A", 0, 4), serving.Request("B", 0, 1), serving.Request("C", 1, 2),
            serving.Request("D", 2, 1))
    static = serving.simulate(reqs, 2, "static")
    assert static.finish == {"A": 4, "B": 1, "C": 6, "D": 5} and static.steps == 6
    assert static.mean_latency(reqs) == pytest.approx(13 / 4)
    assert static.utilisation(2) == pytest.approx(8 / 12)
    cont = serving.simulate(reqs, 2, "continuous")
    assert cont.finish == {"A": 4, "B": 1, "C": 3, "D": 4} and cont.steps == 4
    assert cont.mean_latency(reqs) == pytest.approx(9 / 4) and cont.utilisation(2) == 1


def test_toy_arrivals_as_the_lesson_shows_them():
    static = serving.simulate(serving.TOY_ARRIVALS, 4, "static")
    cont = serving.simulate(serving.TOY_ARRIVALS, 4, "continuous")
    # latencies worked by hand: static 8+2+3+9+12+6+8+11 = 59, continuous 8+2+3+2+6+1+4+2 = 28
    assert (static.steps, static.mean_latency(serving.TOY_ARRIVALS)) == (16, 59 / 8)
    assert (cont.steps, cont.mean_latency(serving.TOY_ARRIVALS)) == (8, 28 / 8)
    assert static.busy_slots == cont.busy_slots == sum(r.tokens for r in serving.TOY_ARRIVALS)
    assert "| continuous | 8 | 3.500 | 87.5% |" in render_example("serving.batching")
    with pytest.raises(ValueError, match="unknown policy"):
        serving.simulate(serving.TOY_ARRIVALS, 4, "greedy")


def test_prefix_saving_by_hand():
    saving = serving.prefix_saving(shared=1000, own=200, requests=50)
    assert (saving.prefill_without, saving.prefill_with) == (60_000, 11_000)
    assert saving.prefill_saved == pytest.approx(49 / 60)
    assert "81.7%" in render_example("serving.prefix")


# --- FlashAttention's IO -------------------------------------------------------------------


def test_standard_attention_hbm_count_by_hand():
    # Q, K read (2Nd); S written, read (2N²); P written, read (2N²); V read, O written (2Nd)
    assert flash_io.standard_hbm_accesses(4, 2) == 4 * 4 * 2 + 4 * 16 == 96


def test_flash_blocks_and_count_by_hand():
    # M = 98,304, d = 64: B_c = ⌈98,304 / 256⌉ = 384, B_r = min(384, 64) = 64, T_c = ⌈4,096/384⌉ = 11
    blocks = flash_io.flash_blocks(4096, 64, flash_io.A100_SRAM_NUMBERS)
    assert (blocks.key_block, blocks.query_block, blocks.key_blocks) == (384, 64, 11)
    # 2·4096·64 + 11·(3·4096·64 + 4·4096) = 524,288 + 11·802,816 = 9,355,264
    assert flash_io.flash_hbm_accesses(4096, 64, flash_io.A100_SRAM_NUMBERS) == 9_355_264
    assert flash_io.standard_hbm_accesses(4096, 64) == 68_157_440   # 4·4096·64 + 4·4096²
    md = render_example("flash.hbm_traffic")
    assert "| 64 | 4,096 | 384×11 | 68.2 | 9.4 | 7.3× |" in md


@pytest.mark.parametrize("d", [64, 128])
def test_the_gain_tends_to_m_over_three_d_squared(d):
    m, n = flash_io.A100_SRAM_NUMBERS, 65536
    ratio = flash_io.standard_hbm_accesses(n, d) / flash_io.flash_hbm_accesses(n, d, m)
    assert ratio == pytest.approx(m / (3 * d * d), rel=0.05)


def test_more_sram_means_less_traffic_and_the_backward_trade():
    counts = [flash_io.flash_hbm_accesses(4096, 64, kib * 512) for kib in (48, 96, 192, 384)]
    assert counts == sorted(counts, reverse=True)
    t = flash_io.backward_trade(4096, 64)
    assert (t.stored_standard, t.stored_flash, t.stored_flash2) == (4096 ** 2, 2 * 4096, 4096)
    assert t.recompute_flops == 2 * 4096 ** 2 * 64 == 2_147_483_648
    assert "| 4,096 | 16,777,216 | 8,192 / 4,096 | 2.15 | 50% |" in render_example("flash.backward")


# --- rewards: Bradley-Terry, PPO's clip, GRPO ---------------------------------------------


def test_bradley_terry_loss_by_hand():
    # gap 1: σ(1) = 1/(1 + e^-1) = 0.7311, loss = -ln 0.7311 = 0.3133
    assert rl_maths.preference_probability(1.5, 0.5) == pytest.approx(0.7311, abs=1e-4)
    assert rl_maths.reward_model_loss(1.5, 0.5) == pytest.approx(0.3133, abs=1e-4)
    assert rl_maths.reward_model_loss(0.0, 0.0) == pytest.approx(math.log(2))
    # only the gap counts
    assert rl_maths.reward_model_loss(10.2, 9.5) == pytest.approx(rl_maths.reward_model_loss(0.9, 0.2))
    assert "| 0.2 | 0.9 | -0.7 | 0.332 | 1.103 |" in render_example("rl.reward_model")


@pytest.mark.parametrize("advantage,ratio,value,flows", [
    (1.0, 1.5, 1.2, False),    # min(1.5, 1.2): clipped, flat
    (1.0, 0.5, 0.5, True),     # min(0.5, 0.8): unclipped
    (-1.0, 0.5, -0.8, False),  # min(-0.5, -0.8): clipped, flat
    (-1.0, 1.5, -1.5, True),   # min(-1.5, -1.2): the worse, unclipped value is kept
])
def test_ppo_clip_by_hand(advantage, ratio, value, flows):
    got, grad = rl_maths.ppo_clipped(ratio, advantage)
    assert got == pytest.approx(value)
    assert (grad != 0) is flows
    if flows:
        assert grad == pytest.approx(advantage)


def test_grpo_advantages_by_hand():
    # mean 1/3, std √(2/9) = 0.4714: right (2/3)/0.4714 = √2, wrong (-1/3)/0.4714 = -1/√2
    adv = rl_maths.group_advantages([1, 0, 0, 0, 1, 0])
    assert adv[0] == pytest.approx(math.sqrt(2)) and adv[1] == pytest.approx(-1 / math.sqrt(2))
    assert sum(adv) == pytest.approx(0)
    assert rl_maths.group_advantages([1, 1, 1]) == [0.0, 0.0, 0.0]
    # with divisor n − 1 = 5: std = √(4/15) = 0.5164, right = 0.6667 / 0.5164 = 1.291
    assert rl_maths.group_advantages([1, 0, 0, 0, 1, 0], unbiased=True)[0] == pytest.approx(1.291,
                                                                                    abs=1e-3)
    assert "| 5 right of 6 | 0.833 | 0.447 | -2.236 |" in render_example("rl.grpo")


# --- decoding controls -----------------------------------------------------------------------


def test_repetition_penalty_by_hand():
    logits = torch.tensor([2.6, -1.3, 0.5, 1.0])
    out = decoding.repetition_penalty(logits, seen=[0, 1, 1], penalty=1.3)
    # 2.6 / 1.3 = 2.0 (positive: divided); -1.3 · 1.3 = -1.69 (negative: multiplied); once each
    assert [round(v, 4) for v in out.tolist()] == [2.0, -1.69, 0.5, 1.0]


def test_min_p_and_top_p_by_hand():
    probs = torch.tensor([0.5, 0.2, 0.12, 0.08, 0.05, 0.03, 0.02])
    # bar 0.2 · 0.5 = 0.1: keeps 0.5, 0.2, 0.12 and renormalises by 0.82
    assert decoding.min_p_keep(probs, 0.2).tolist() == [True, True, True] + [False] * 4
    assert decoding.min_p_filter(probs, 0.2)[0].item() == pytest.approx(0.5 / 0.82)
    # cumulative 0.5, 0.7, 0.82, 0.90: top-p 0.85 needs four
    assert decoding.top_p_count(probs, 0.85) == 4


def test_the_shipped_models_distribution_and_the_examples_agree():
    logits, vocab, seen = decoding.shipped_distribution("lil")
    assert [vocab.chars[i] for i in seen] == ["l", "i", "l"]
    penalised = decoding.repetition_penalty(logits, seen, 1.3)
    l_id = vocab.chars.index("l")
    assert penalised[l_id].item() == pytest.approx(logits[l_id].item() / 1.3)
    md = render_example("decoding.repetition")
    assert f"| l | yes | {logits[l_id].item():.3f} | {logits[l_id].item() / 1.3:.3f} |" in md
    probs = torch.softmax(decoding.shipped_distribution("kri")[0] / 2.0, -1)
    keeps = int(decoding.min_p_keep(probs, 0.1).sum())
    assert keeps < decoding.top_p_count(probs, 0.9)          # the lesson's point at T = 2
    assert f"| kri | 2.0 | {probs.max().item():.3f} |" in render_example("decoding.min_p")


# --- windows, sinks and latent attention ------------------------------------------------------


def test_window_and_sinks_by_hand():
    assert attention_variants.window_positions(10, 4) == [6, 7, 8, 9]
    assert attention_variants.window_positions(10, 4, sinks=1) == [0, 6, 7, 8, 9]
    assert attention_variants.window_positions(3, 4, sinks=1) == [0, 1, 2]
    # tokens 0..9 into 4 slots: slot 0 holds 0, 4, 8 in turn; slot 1 holds 1, 5, 9
    assert attention_variants.rolling_slots(10, 4) == [8, 9, 6, 7]
    assert [attention_variants.cached_tokens(t, 4, sinks=1) for t in (1, 5, 10)] == [1, 5, 5]
    assert attention_variants.cached_tokens(32768) == 32768 and attention_variants.cached_tokens(32768, 4096) == 4096


def test_window_bytes_for_mistral_by_hand():
    # 2 · 32 layers · 8 kv heads · 128 · 2 bytes = 131,072 = 128 KiB per token; 4,096 → 512 MiB
    md = render_example("kvmem.window_bytes")
    assert "| 32,768 | 4.0 GiB | 512 MiB | 512 MiB |" in md


def test_mla_against_mha_mqa_gqa_by_hand():
    s = attention_variants.DEEPSEEK_V2
    got = {l.name: l.numbers_per_layer
           for l in attention_variants.layouts(s["n_heads"], s["head_dim"], 8, s["latent"], s["rope_dim"])}
    # 2·128·128, 2·8·128, 2·128, 512 + 64
    assert got == {"MHA": 32768, "GQA, 8 groups": 2048, "MQA": 256, "MLA": 576}
    mla = attention_variants.Layout("MLA", 576)
    assert mla.bytes_per_token(60) == 576 * 60 * 2 == 69_120    # 67.5 KiB
    assert "| MLA | 576 | 67.5 KiB | 56.9× |" in render_example("kvmem.mla")


# --- a fixed-size state ------------------------------------------------------------------------


def test_costs_per_token_by_hand():
    assert state_space.attention_cost(4096, 4096).flops == 4 * 4096 * 4096 == 67_108_864
    assert state_space.attention_cost(4096, 4096).state == 2 * 4096 * 4096
    lin = state_space.linear_attention_cost(4096, 128)
    assert (lin.flops, lin.state) == (4 * 4096 * 128, 4096 * 128) == (2_097_152, 524_288)
    ssm = state_space.ssm_cost(4096)      # 2 · 4096 channels · 16 state numbers, 5 FLOPs each
    assert (ssm.flops, ssm.state) == (655_360, 131_072)
    t = state_space.break_even_position(128)
    assert state_space.attention_cost(t, 4096).flops == lin.flops
    assert "| linear attention, any t | 2.1 | 524,288 |" in render_example("flash.state_cost")


def test_linear_attention_recurrent_equals_parallel():
    torch.manual_seed(1)
    q, k, v = (torch.randn(7, 3, dtype=torch.float64) for _ in range(3))
    assert torch.allclose(state_space.linear_attention_parallel(q, k, v),
                          state_space.linear_attention_recurrent(q, k, v))
    # position 0 attends only to itself: its output is v[0]
    assert torch.allclose(state_space.linear_attention_recurrent(q, k, v)[0], v[0])


# --- lessons, cards and quizzes --------------------------------------------------------------


@pytest.fixture(scope="module")
def lessons():
    return {l.id: l for l in L.load_lessons()}


@pytest.fixture(scope="module")
def deck():
    return load_decks()


def test_each_lesson_is_in_the_track_with_examples_and_a_snippet(lessons):
    for lesson_id, order in SCALE_OUT.items():
        lesson = lessons[lesson_id]
        assert lesson.order == order
        assert lesson.example_ids() and lesson.snippets(), lesson_id
    ordered = [l.id for l in sorted(lessons.values(), key=lambda l: l.order)]
    assert ordered.index("precision-and-memory") < ordered.index("parallelism")
    assert ordered.index("inference-cost") < ordered.index("serving") < ordered.index("flash-attention")


def test_every_card_of_the_deck_belongs_to_one_of_these_lessons(deck):
    mine = [c for c in deck if Path(c.source).name == DECK.name]
    assert {c.lesson for c in mine} == set(SCALE_OUT) | SECTIONS


@pytest.mark.parametrize("lesson_id", sorted(set(SCALE_OUT) | SECTIONS))
def test_chapter_quiz_has_six_questions_in_two_formats(deck, lesson_id):
    assert len({c.id.split(":")[0] for c in deck.by_lesson(lesson_id)}) >= 6
    for seed in range(5):
        quiz = chapter_quiz(lesson_id, n=8, seed=seed, deck=deck)
        assert len(quiz) >= 6 and len({q.format for q in quiz}) >= 2, (lesson_id, seed)


SOURCES = {
    "parallelism": ("Rajbhandari et al., 2020", "Shoeybi et al., 2019", "Huang et al., 2019"),
    "serving": ("Kwon et al., 2023", "Yu et al., 2022", "Agrawal et al., 2023"),
    "flash-attention": ("Dao et al., 2022", "theorem 2", "Katharopoulos et al., 2020",
                        "Gu et al., 2022", "Gu and Dao, 2023", "Jelassi et al. (2024)",
                        "Lieber et al., 2024"),
    "after-pretraining": ("Bradley and Terry, 1952", "Ouyang et al., 2022",
                          "Schulman et al., 2017", "Shao et al., 2024", "Gao et al. (2023)"),
    "sampling": ("Keskar et al., 2019", "Nguyen et al., 2024"),
    "kv-memory-gqa": ("Jiang et al., 2023", "Xiao et al., 2023", "DeepSeek-AI, 2024"),
}


@pytest.mark.parametrize("lesson_id", sorted(SOURCES))
def test_the_lessons_cite_their_sources(lessons, lesson_id):
    text = " ".join(lessons[lesson_id].body.split())
    for source in SOURCES[lesson_id]:
        assert source in text
