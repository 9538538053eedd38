"""Cards and numeric templates fixed by the round-4 content audit, each checked against an
independent computation (the trainer, the kata's reference solution, torch) or the paper."""

from __future__ import annotations

import importlib.util
import itertools
import random

import torch

from minigpt.katas.catalogue import kata_by_name
from minigpt.study import numeric, questions
from minigpt.study.decks import cached_decks
from minigpt.study.templates import fresh
from minigpt.teaching import rl_maths
from minigpt.training.options import TrainConfig
from minigpt.training.schedule import lr_at


def _deck():
    return list(cached_decks())


def _card(card_id: str):
    return next(c for c in _deck() if c.id == card_id)


def _text(card) -> str:
    return " ".join((card.front, card.back, card.definition, card.short, *card.checklist))


# ---------------------------------------------------------------------------- numeric templates


def _kata_lr_schedule():
    kata = kata_by_name("lr_schedule")
    spec = importlib.util.spec_from_file_location("lr_solution", kata.folder / "solution.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.lr_schedule


def test_the_warmup_card_accepts_what_the_trainer_and_the_kata_compute():
    card, kata = _card("num.warmup-lr"), _kata_lr_schedule()
    rng = random.Random(7)
    for _ in range(300):
        item = fresh(card, rng).numeric
        peak, warmup, step = item.params["peak"], item.params["warmup"], item.params["step"]
        trainer = lr_at(TrainConfig(lr=peak, warmup=warmup), step / (10 * warmup), step, 10 * warmup)
        assert kata(step, peak, 0.0, warmup, 10 * warmup) == trainer
        assert numeric.check(item, repr(trainer)).correct, item.prompt
        assert "(s + 1)" in item.prompt  # the convention is stated, not left to guess


def _all_softmax_items():
    card = _card("num.softmax")
    for scores in itertools.permutations(range(-2, 4), 3):
        for pick in range(3):
            yield numeric.generate("softmax", {"scores": [float(s) for s in scores], "pick": pick},
                                   tolerance=card.numeric.tolerance,
                                   abs_tolerance=card.numeric.abs_tolerance)


def test_the_softmax_template_refuses_zero_and_accepts_the_three_decimal_answer():
    items = list(_all_softmax_items())
    assert len(items) == 360
    for item in items:
        weight = torch.softmax(torch.tensor(item.params["scores"], dtype=torch.float64), 0)
        value = float(weight[item.params["pick"]])
        assert not numeric.check(item, "0").correct, item.prompt
        assert numeric.check(item, f"{value:.3f}").correct, item.prompt
        assert max(item.abs_tolerance, item.tolerance * value) <= 0.11 * value


def test_every_template_gives_slack_relative_to_the_answer():
    rng = random.Random(3)
    for card in (c for c in _deck() if c.template and c.numeric is not None):
        for _ in range(100):
            item = fresh(card, rng).numeric
            if item.is_shape or abs(float(item.value)) < 1e-9:
                continue
            value = abs(float(item.value))
            assert max(item.abs_tolerance, item.tolerance * value) <= 0.11 * value, item.prompt
            assert not numeric.check(item, "0").correct, item.prompt


def test_the_kv_numbers_card_says_it_assumes_plain_multi_head_attention():
    item = fresh(_card("num.kv-numbers"), random.Random(1)).numeric
    assert "as many key/value heads as query heads" in item.prompt


# ---------------------------------------------------------------------------- cards


def test_mla_rebuilds_keys_and_values_for_every_head_not_per_group():
    text = _card("term.mla").definition
    assert "query group" not in text
    assert "separate key and value are rebuilt for every one of the n_h" in text


def test_the_clip_is_on_the_ratio_a_relative_change():
    # a token at 0.01 moved to 0.0125 has moved 0.0025 in probability, far less than ε = 0.2,
    # yet its ratio 1.25 is past 1 + ε: the clip already stops its gradient
    _, grad = rl_maths.ppo_clipped(0.0125 / 0.01, advantage=1.0)
    assert grad == 0.0
    definition = _card("term.clipped-objective").definition
    assert "moved more than ε" not in definition
    assert "π_new/π_old" in definition and "factor 1 ± ε" in definition


def test_grpo_card_names_both_standard_deviation_divisors():
    rewards = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    t = torch.tensor(rewards, dtype=torch.float64)
    by_n = (t - t.mean()) / t.std(correction=0)
    by_n_minus_1 = (t - t.mean()) / t.std()  # torch's default, what TRL's GRPOTrainer uses
    assert rl_maths.group_advantages(rewards, unbiased=True) == by_n_minus_1.tolist()
    answer = _card("q.grpo-advantages").back
    for adv in (by_n, by_n_minus_1):
        assert f"+{adv[0]:.3f}" in answer and f"−{-adv[1]:.3f}" in answer
    assert "convention" in answer


def test_flash_backward_saves_two_statistics_per_row_in_version_one():
    card = _card("q.flash-backward")
    assert "one log-sum-exp per row, N numbers" not in card.back
    assert "two numbers per row" in card.back and "FlashAttention-2" in card.back
    assert "log-sum-exp" not in _card("term.attention-recomputation").definition


def test_softmax_bottleneck_rank_and_remedies():
    # log-softmax subtracts one number per context: the rank of the log-probabilities is d + 1
    g = torch.Generator().manual_seed(0)
    d, contexts, vocab = 4, 40, 30
    logits = torch.randn(contexts, d, generator=g, dtype=torch.float64) @ torch.randn(
        d, vocab, generator=g, dtype=torch.float64)
    assert torch.linalg.matrix_rank(logits) == d
    assert torch.linalg.matrix_rank(torch.log_softmax(logits, -1)) == d + 1
    card = _card("q.softmax-bottleneck")
    assert "at most one more" in card.back
    assert "adaptive softmax is no fix" in card.back
    assert not any("adaptive softmax)" in point for point in card.checklist)


def test_group_size_spans_32_to_128():
    assert "32 to 128" in _card("term.group-wise-quantization").definition


def test_the_output_head_is_not_quizzed_against_output_projection():
    deck, card = cached_decks(), _card("term.output-head")
    reverse = next(c for c in _deck() if c.kind == "reverse" and c.term == card.term)
    for seed in range(40):
        options = questions.choice_question(deck, reverse, random.Random(seed)).options
        assert all(o.text.casefold() != "output projection" for o in options)


def test_dpo_card_names_the_implicit_reward_and_offline_learning():
    card = _card("q.dpo-vs-rlhf")
    assert "β·log(π/π_ref)" in card.back and "offline" in card.back
    assert any("implicit reward" in point for point in card.checklist)


def test_length_penalty_cards_use_beta_not_the_acceptance_rates_alpha():
    for card_id in ("term.length-penalty", "q.beam-short-names"):
        card = _card(card_id)
        assert "n^α" not in _text(card) and "n^β" in _text(card)


def test_the_training_lesson_states_the_one_warmup_convention():
    from minigpt.lessons import load_lessons

    body = " ".join(next(x.body for x in load_lessons() if x.id == "training").split())
    assert "peak · (s + 1) / warmup" in body
    cfg = TrainConfig(lr=1e-3, warmup=500)
    assert lr_at(cfg, 0.0, 0, 5000) == 1e-3 / 500 and lr_at(cfg, 0.1, 499, 5000) == 1e-3
