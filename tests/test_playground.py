"""The playground's library helpers: checkpoints found, membership, summaries, sweep, step mode,
scoring, comparison, saving; and the filtering maths on hand-computed distributions."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from minigpt.playground.checkpoint_choices import find_checkpoints
from minigpt.playground.generation import (
    Settings,
    load_for_playground,
    run_batch,
    save_names,
    summarize,
    temperature_sweep,
)
from minigpt.playground.inspection import Stepper, compare_models, score_name
from minigpt.sampling import Sample, SamplingError, filter_logits, generate, greedy_continuation


@pytest.fixture(scope="module")
def ckpts(playground_checkpoints) -> dict[str, Path]:
    return playground_checkpoints


@pytest.fixture(scope="module")
def gpt(ckpts):
    return load_for_playground(ckpts["default"])


def test_find_checkpoints_lists_default_first(ckpts):
    found = find_checkpoints(ckpts["default"].parent, runs_root=ckpts["default"].parent / "no-runs")
    assert [c.path.name for c in found] == ["default", "bigram", "mlp"]
    assert [c.kind for c in found] == ["gpt", "bigram", "mlp"]
    assert all(c.val_loss is not None for c in found)


def test_membership_of_known_names(gpt):
    ds = gpt.dataset
    assert ds.membership(ds.splits.train[0]) == "train"
    assert ds.membership(ds.splits.val[0]) == "val"
    assert ds.membership(ds.splits.test[0]) == "test"
    assert ds.membership("zzqx") == "new"
    batch = run_batch(gpt, Settings(n=40, seed=3))
    for s in batch.samples:
        expected = ("train" if s.text in ds.splits.train else "val" if s.text in ds.splits.val
                    else "test" if s.text in ds.splits.test else "new")
        assert s.membership == expected


def test_same_seed_same_names_and_summary(gpt):
    a = run_batch(gpt, Settings(n=20, seed=7, temperature=0.8))
    b = run_batch(gpt, Settings(n=20, seed=7, temperature=0.8))
    assert [s.text for s in a.samples] == [s.text for s in b.samples]
    direct = generate(gpt.model, gpt.vocab, 20, temperature=0.8, seed=7)
    assert [s.text for s in a.samples] == [s.text for s in direct]
    sm = a.summary
    assert sm.count == 20
    assert sm.new == sum(s.membership == "new" for s in a.samples)
    assert sm.mean_length == pytest.approx(sum(len(s.text) for s in a.samples) / 20)
    assert sm.mean_logprob_per_char == pytest.approx(
        sum(s.logprob for s in a.samples) / sum(s.n_tokens for s in a.samples))


def test_summary_by_hand():
    samples = [Sample("ab", -3.0, 3, True, "new"), Sample("abcd", -5.0, 5, True, "train")]
    sm = summarize(samples)
    assert (sm.new, sm.share_new, sm.mean_length) == (1, 0.5, 3.0)
    assert sm.mean_logprob_per_char == pytest.approx(-1.0)
    assert "new 50% (1/2)" in sm.line()


def test_top_k_one_is_greedy(gpt):
    greedy = greedy_continuation(gpt.model, gpt.vocab, "")
    batch = run_batch(gpt, Settings(n=5, top_k=1, seed=123))
    assert {s.text for s in batch.samples} == {greedy}


def test_filter_logits_hand_computed():
    probs = torch.tensor([0.5, 0.3, 0.15, 0.05])
    logits = probs.log()
    # top-p 0.7: 0.5 alone is short of 0.7, 0.5 + 0.3 reaches it → keep the first two.
    kept = torch.isfinite(filter_logits(logits, top_p=0.7))
    assert kept.tolist() == [True, True, False, False]
    # top-p 0.8 is reached exactly by 0.5 + 0.3: the third is not needed.
    assert torch.isfinite(filter_logits(logits, top_p=0.8)).tolist() == [True, True, False, False]
    # top-p 0.81 needs the third one.
    assert torch.isfinite(filter_logits(logits, top_p=0.81)).tolist() == [True, True, True, False]
    # top-p smaller than the best probability still keeps the best.
    assert torch.isfinite(filter_logits(logits, top_p=0.1)).tolist() == [True, False, False, False]
    # top-k 3 then top-p 0.9 of the renormalised (0.5, 0.3, 0.15)/0.95: 0.526 + 0.316 = 0.842 < 0.9.
    both = torch.softmax(filter_logits(logits, top_k=3, top_p=0.9), -1)
    assert both.tolist() == pytest.approx([0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0.0])


def test_prefix_outside_vocabulary_is_a_clear_error(gpt):
    with pytest.raises(SamplingError, match=r"'7' not in the model's vocabulary"):
        run_batch(gpt, Settings(prefix="a7"))
    with pytest.raises(SamplingError, match="longer than max length"):
        run_batch(gpt, Settings(prefix="abc", max_len=2))


def test_prefix_and_max_len_are_respected(gpt):
    batch = run_batch(gpt, Settings(n=30, prefix="el", max_len=4, seed=1))
    assert all(s.text.startswith("el") and len(s.text) <= 4 for s in batch.samples)


def test_temperature_sweep_same_seed_entropy_grows(gpt):
    cols = temperature_sweep(gpt, Settings(n=10, seed=5))
    assert [c.temperature for c in cols] == pytest.approx([0.5, 0.8, 1, 1.2, 1.5])
    ents = [c.entropy for c in cols]
    assert ents == sorted(ents)  # a hotter softmax is flatter
    for c in cols:
        again = generate(gpt.model, gpt.vocab, 10, temperature=c.temperature, seed=5)
        assert [s.text for s in c.batch.samples] == [s.text for s in again]


def test_stepper_sample_choose_undo(gpt):
    st = Stepper(gpt, Settings(seed=0, temperature=1.0))
    d = st.distribution
    assert float(d.probs.sum()) == pytest.approx(1.0)
    p_e = float(d.probs[gpt.vocab.stoi["e"]])
    st.choose("e")
    assert st.text == "e" and st.logprob == pytest.approx(math.log(p_e))
    st.sample()
    assert st.undo() and st.text == "e"
    with pytest.raises(SamplingError, match="not in the model's vocabulary"):
        st.choose("7")
    st.choose(".")
    assert st.finished and st.membership in ("train", "val", "test", "new")
    with pytest.raises(SamplingError, match="complete"):
        st.sample()


def test_stepper_refuses_filtered_character(gpt):
    st = Stepper(gpt, Settings(top_k=1))
    best = gpt.vocab.chars[int(st.distribution.probs.argmax())]
    other = next(c for c in gpt.vocab.chars if c != best)
    with pytest.raises(SamplingError, match="ruled out"):
        st.choose(other)


def test_score_name(gpt):
    sc = score_name(gpt, "ava")
    assert [r.char for r in sc.rows] == ["a", "v", "a", "."]
    assert sc.total_logprob == pytest.approx(sum(math.log(r.prob) for r in sc.rows))
    assert all(r.continuation.startswith(r.prefix) for r in sc.rows)
    assert sc.membership in ("train", "val", "test")
    with pytest.raises(SamplingError):
        score_name(gpt, "av3")


def test_compare_models_one_column_per_kind(ckpts, gpt):
    choices = find_checkpoints(ckpts["default"].parent, runs_root=ckpts["default"].parent / "none")
    cols = compare_models(choices, Settings(n=8, seed=2), reference=gpt)
    assert [c.kind for c in cols] == ["bigram", "mlp", "gpt"]
    assert all(c.batch is not None and len(c.batch.samples) == 8 for c in cols)
    assert cols[2].val_loss == pytest.approx(gpt.loss[0])


def test_compare_counts_a_bigram_when_none_saved(ckpts, gpt):
    only_gpt = [c for c in find_checkpoints(ckpts["default"].parent, runs_root=Path("/nonexistent"))
                if c.kind == "gpt"]
    cols = compare_models(only_gpt, Settings(n=4, seed=2), reference=gpt)
    assert cols[0].batch is not None and "counted" in cols[0].label and cols[0].val_loss > 0
    assert cols[1].batch is None and "minigpt train --model mlp" in cols[1].note


def test_save_names(tmp_path, gpt):
    batch = run_batch(gpt, Settings(n=5, seed=1))
    path = save_names(batch.samples, Settings(n=5, seed=1), "default", tmp_path)
    lines = path.read_text().splitlines()
    assert lines[0].startswith("# 5 names") and len(lines) == 7
    assert [l.split("\t")[0] for l in lines[2:]] == [s.text for s in batch.samples]


def test_one_thread_restores_the_thread_count():
    from minigpt.training.cpu_policy import one_thread

    before = torch.get_num_threads()
    with one_thread():
        with one_thread():
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


# ------------------------------------------------------------------ log p under the model, case, your runs
def test_model_log_p_is_the_models_own_even_when_top_k_1_makes_the_sampled_one_zero(gpt):
    from minigpt.sampling import score_word

    batch = run_batch(gpt, Settings(n=6, seed=5, top_k=1))
    assert all(s.logprob == pytest.approx(0.0) for s in batch.samples)  # greedy: p = 1 after the filter
    for s, lp in zip(batch.samples, batch.model_logprob):
        if s.finished:
            assert lp == pytest.approx(score_word(gpt.model, gpt.vocab, s.text)[1], abs=1e-4)
            assert lp < 0
    assert batch.summary.filtered and "as sampled 0.000" in batch.summary.line()


def test_model_log_p_equals_the_sampled_one_at_t1_without_filters_prefix_excluded(gpt):
    batch = run_batch(gpt, Settings(n=8, seed=2, prefix="a"))
    for s, lp in zip(batch.samples, batch.model_logprob):
        assert lp == pytest.approx(s.logprob, abs=1e-4)  # same tokens, same distribution
    assert not batch.summary.filtered and "as sampled" not in batch.summary.line()


def test_model_log_p_of_a_name_cut_at_max_length_counts_only_its_characters(gpt):
    batch = run_batch(gpt, Settings(n=10, seed=1, max_len=2))
    cut = [(s, lp) for s, lp in zip(batch.samples, batch.model_logprob) if not s.finished]
    assert cut, "expected some names cut at two characters"
    for s, lp in cut:
        assert lp == pytest.approx(s.logprob, abs=1e-4) and s.n_tokens == len(s.text) == 2


def test_names_typed_in_any_case_fit_a_lower_case_vocabulary(gpt):
    from minigpt.playground.generation import fit_case

    assert fit_case(gpt.vocab, "Ava") == "ava"
    assert score_name(gpt, "AVA").total_logprob == pytest.approx(score_name(gpt, "ava").total_logprob)

    class Mixed:
        chars = (".", "A", "a")

    assert fit_case(Mixed, "Aa") == "Aa"  # a vocabulary with capitals keeps them apart


def test_checkpoint_labels_name_the_key_settings(ckpts):
    choices = find_checkpoints(ckpts["default"].parent, runs_root=Path("/nonexistent"))
    gpt_choice = next(c for c in choices if c.kind == "gpt")
    assert "16×1" in gpt_choice.label and "seed 1337" in gpt_choice.label and "val " in gpt_choice.label


def test_key_settings_tell_muon_runs_from_adamw_runs():
    from minigpt.playground.checkpoint_choices import key_settings

    shape = {"d_model": 64, "n_layers": 4}
    assert key_settings("gpt", shape, {"optimizer": "muon", "lr": 5e-3, "seed": 7}) == "64×4 muon lr 5e-3 seed 7"
    assert key_settings("gpt", shape, {"optimizer": "adamw", "lr": 5e-3}) == "64×4 lr 5e-3"
    assert key_settings("gpt", shape, {"lr": 5e-3}) == "64×4 lr 5e-3"  # saved before the option: AdamW


def test_compare_adds_a_column_for_the_learners_own_run(ckpts, gpt, tmp_path):
    import shutil

    from minigpt.playground.checkpoint_choices import CheckpointChoice

    shipped = find_checkpoints(ckpts["default"].parent, runs_root=Path("/nonexistent"))
    own = shutil.copytree(ckpts["default"], tmp_path / "run" / "checkpoint")
    mine = CheckpointChoice("your run tiny (MiniGPT 16×1)", own, "gpt", 9.9, "run", "MiniGPT 16×1")
    cols = compare_models(shipped + [mine], Settings(n=3, seed=2), reference=gpt)
    assert [c.slot for c in cols] == ["bigram", "mlp", "gpt", "yours"]
    assert cols[3].label == "MiniGPT · yours" and cols[3].batch is not None
    assert cols[2].label == "MiniGPT · shipped"
    # No run of their own: the three references only.
    assert [c.slot for c in compare_models(shipped, Settings(n=3, seed=2), reference=gpt)] == ["bigram", "mlp", "gpt"]
