"""Test-time compute on names (minigpt.teaching.test_time, the ``test_time`` lab job): pass@k and
best-of-k checked against counting every k-subset, the vote's choice, the held-out list, and the
job's claim on a cut-down run of the shipped model."""

from __future__ import annotations

from itertools import combinations

import pytest

from minigpt.sampling import Sample
from minigpt.teaching import test_time


@pytest.fixture(scope="module")
def shipped():
    import torch

    from minigpt.checkpoint import load_checkpoint
    from minigpt.data import load_words
    from minigpt.paths import default_checkpoint, default_dataset

    torch.set_num_threads(1)
    ck = load_checkpoint(default_checkpoint())
    return ck, list(load_words(default_dataset()))


def test_pass_at_k_is_the_share_of_k_subsets_holding_a_pass_on_seeded_samples(shipped):
    from minigpt.sampling import generate

    ck, _ = shipped
    names = [s.text for s in generate(ck.model, ck.vocab, 12, prefix="el", seed=3)]
    verdicts = [name.endswith("a") for name in names]
    assert 0 < sum(verdicts) < len(verdicts)  # a mix, or the check below is trivial
    ks = range(1, len(names) + 1)
    curve = test_time.pass_curve(verdicts, ks)
    for k, estimate in zip(ks, curve, strict=True):
        subsets = list(combinations(range(len(names)), k))
        assert estimate == pytest.approx(sum(any(verdicts[i] for i in s) for s in subsets) / len(subsets))
    assert curve == sorted(curve) and curve[-1] == 1.0


def test_best_of_k_is_the_mean_verdict_on_the_likeliest_of_every_k_subset():
    scores = [-3.0, -1.0, -4.5, -2.0, -1.5, -6.0, -2.5, -0.5, -5.0]
    verdicts = [True, False, True, False, True, True, False, False, True]
    for k in range(1, len(scores) + 1):
        subsets = list(combinations(range(len(scores)), k))
        by_hand = sum(verdicts[max(s, key=lambda i: scores[i])] for s in subsets) / len(subsets)
        assert test_time.best_of_k(scores, verdicts, k) == pytest.approx(by_hand)
    assert test_time.best_of_k(scores, verdicts, 1) == pytest.approx(sum(verdicts) / len(verdicts))


def test_the_vote_takes_the_most_frequent_name_and_breaks_ties_by_likelihood():
    assert test_time.majority(["ann", "bo", "ann", "cy"], [-5.0, -1.0, -5.0, -2.0]) == 0
    assert test_time.majority(["ann", "bo", "cy", "bo", "ann"], [-5.0, -1.0, -2.0, -1.0, -5.0]) == 1
    curve = test_time.vote_curve(["a", "b", "a"], [-1.0, -2.0, -1.0], [True, False, True], (1, 3), seed=0, draws=50)
    assert curve[1] == 1.0 and curve == test_time.vote_curve(["a", "b", "a"], [-1.0, -2.0, -1.0], [True, False, True],
                                                    (1, 3), seed=0, draws=50)


def test_the_held_out_names_were_never_trained_on_and_the_rule_is_the_verifiers(shipped):
    from minigpt.splits import split_words

    _, words = shipped
    held = test_time.held_out_names(words, 42)
    splits = split_words(words, 42)
    assert held and not held & set(splits.train) and held <= set(splits.test)
    rule = test_time.verifier_for(test_time.Task("el", "rule", 5, "a"), held)
    assert rule("ellia") and not rule("ella") and not rule("ellie")


def test_a_sample_cut_at_the_length_limit_never_passes():
    task = test_time.Task("a", "rule", 3, "a")
    cut = Sample("ana", -1.0, 0, False)
    done = Sample("ana", -1.0, 4, True)
    result = test_time.score_task(task, [cut, done], test_time.verifier_for(task, frozenset()), (1, 2), seed=0)
    assert result.right == 1 and result.pass_at == [0.5, 1.0]


def test_on_the_shipped_model_only_a_checker_turns_samples_into_successes(shipped):
    """The lab job's claim on a cut-down run (4 prompts per verifier, 64 samples each, fixed seeds):
    the likeliest of 4 samples passes more often than one sample but less often than pass@4; at 64
    samples a checker finds a pass for most prompts while the model's own choice or vote rarely is
    one, and the likeliest of all 64 is never a held-out name (it is a name the model trained on)."""
    ck, words = shipped
    cut = [t for t in test_time.tasks() if t.prompt in ("ma", "ka", "el", "br")]
    result = test_time.measure(ck.model, ck.vocab, words, 42, n=64, ks=(1, 4, 64), task_list=cut)
    for verifier, curves in result["summary"].items():
        single, pass4, pass64 = curves["pass_at_k"]
        _, best4, best64 = curves["best_of_k_logprob"]
        vote64 = curves["majority_vote"][2]
        assert single < best4 < pass4, verifier
        assert pass64 > 0.5 and max(best64, vote64) < pass64 / 3, (verifier, curves)
    assert result["summary"]["held-out"]["best_of_k_logprob"][2] == 0.0
