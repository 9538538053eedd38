"""Beam search against an exhaustive search on a tiny model, greedy decoding at width 1, and the
length penalty's effect on the shipped model's names."""

from __future__ import annotations

import itertools
import math

import pytest
import torch

from minigpt.data import Vocab
from minigpt.errors import SamplingError
from minigpt.models.config import GPTConfig
from minigpt.models.gpt import MiniGPT
from minigpt.teaching.beam_search import beam_search, greedy_name, length_score
from tests.helpers.floats import LOGPROB_ATOL

VOCAB = Vocab((".", "a", "b", "c"))
BLOCK = 4  # names of at most 3 characters: 1 + 3 + 9 + 27 = 40 of them


@pytest.fixture(autouse=True)
def _one_thread():
    """Thousands of tiny forward passes: on a busy machine extra threads only wait on each other."""
    from minigpt.training.cpu_policy import one_thread

    with one_thread():
        yield


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(3)
    model = MiniGPT(GPTConfig(vocab_size=4, block_size=BLOCK, d_model=8, n_heads=2, n_layers=1))
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0, 0.7)
    return model.eval()


def exhaustive(model) -> list[tuple[tuple[int, ...], float]]:
    """Every name of at most BLOCK − 1 characters with its log-probability (end token included)."""
    out = []
    for n in range(BLOCK):
        for chars in itertools.product(range(1, 4), repeat=n):
            seq = [0, *chars, 0]
            with torch.no_grad():
                logits, _ = model(torch.tensor([seq[:-1]]))
            logp = torch.log_softmax(logits[0].double(), -1)
            out.append((chars, float(sum(logp[t, seq[t + 1]] for t in range(len(seq) - 1)))))
    return out


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0])
def test_a_beam_wide_enough_finds_what_an_exhaustive_search_finds(tiny, alpha):
    every = exhaustive(tiny)
    # the rest of the mass is in names cut at the block size (a fourth character): no name
    assert len(every) == 40 and 0.5 < math.fsum(math.exp(lp) for _, lp in every) < 1
    best = sorted(every, key=lambda e: length_score(e[1], len(e[0]) + 1, alpha), reverse=True)
    found = beam_search(tiny, VOCAB, width=200, alpha=alpha, n_best=len(every))
    assert len(found) == len(every)
    assert [tuple(b.ids) for b in found[:10]] == [chars for chars, _ in best[:10]]
    for b, (_, lp) in zip(found, best):
        assert b.logprob == pytest.approx(lp, abs=LOGPROB_ATOL)  # float32 batch against float64


def test_a_narrow_beam_can_miss_the_best_name_a_wide_one_finds(tiny):
    every = exhaustive(tiny)
    top = max(lp for _, lp in every)
    widths = [beam_search(tiny, VOCAB, width=w)[0].logprob for w in (1, 2, 200)]
    assert widths[-1] == pytest.approx(top, abs=LOGPROB_ATOL)
    assert all(w <= top + LOGPROB_ATOL for w in widths)  # float32 beams, a float64 top


def test_width_one_is_greedy_decoding_on_the_shipped_model():
    from minigpt.checkpoint import load_checkpoint
    from minigpt.paths import default_checkpoint
    from minigpt.sampling import greedy_continuation

    ck = load_checkpoint(default_checkpoint())
    for prefix in ("", "jo", "mar"):
        assert prefix + greedy_name(ck.model, ck.vocab, prefix).text(ck.vocab) == prefix + \
            greedy_continuation(ck.model, ck.vocab, prefix)


def test_the_length_penalty_lengthens_the_names_found_on_the_shipped_model():
    from minigpt.checkpoint import load_checkpoint
    from minigpt.paths import default_checkpoint

    ck = load_checkpoint(default_checkpoint())
    raw = beam_search(ck.model, ck.vocab, 10, alpha=0.0)
    per_char = beam_search(ck.model, ck.vocab, 10, alpha=1.0)
    assert sum(b.n_tokens for b in per_char) > sum(b.n_tokens for b in raw)
    # Beam search never finds a worse name than greedy. Both often find the same name, scored once
    # in a batch and once row by row: the float32 sums then differ in the 7th digit (issue 56).
    greedy = greedy_name(ck.model, ck.vocab)
    assert raw[0].ids == greedy.ids or raw[0].logprob >= greedy.logprob - LOGPROB_ATOL


def test_bad_settings_are_refused(tiny):
    with pytest.raises(SamplingError):
        beam_search(tiny, VOCAB, 0)
    with pytest.raises(SamplingError):
        beam_search(tiny, VOCAB, 2, alpha=-1)
    with pytest.raises(SamplingError):
        beam_search(tiny, VOCAB, 2, prefix="a.b")


def test_length_score_by_hand():
    assert length_score(-6.0, 3, 0.0) == -6.0
    assert length_score(-6.0, 3, 1.0) == -2.0
    assert length_score(-8.0, 4, 0.5) == -4.0


def test_the_lesson_example_pins_greedy_and_the_empty_name():
    from minigpt.checkpoint import load_checkpoint
    from minigpt.paths import default_checkpoint
    from minigpt.sampling import greedy_continuation, score_word
    from minigpt.teaching.examples.catalog import render_example

    ck = load_checkpoint(default_checkpoint())
    text = render_example("beam.widths")
    assert f"| 1 (greedy) | {greedy_continuation(ck.model, ck.vocab, '')} |" in text
    _, empty = score_word(ck.model, ck.vocab, "")  # log p of ending at once
    assert f"| 30 | (empty) | {empty:.2f} |" in text
