"""Induction heads: the repeated-chunk data, the attention-only option, the detection scores
(exact on hand-made attention maps, then on the bundled trained model) and a real short run."""

from __future__ import annotations

import json
import math

import pytest
import torch
from torch.nn import functional as F

from minigpt.errors import DatasetError
from minigpt.models.config import GPTConfig
from minigpt.models.gpt import MiniGPT
from minigpt.repeat_data import first_copy_targets, load_repeat_dataset, repeat_rows, repeated_targets
from minigpt.teaching import induction
from minigpt.teaching.params import gpt_total
from tests.helpers.floats import MODEL_OUTPUT

# The bundled checkpoint (scripts/make_induction_checkpoint.py) as measured when it was made: the
# lesson shows these numbers, so a new checkpoint means checking them again (and the lesson's prose).
BUNDLED = {"previous L0H0": 0.80, "induction L1H0": 0.67, "repeats": 0.168, "first copy": 3.437}


@pytest.fixture(autouse=True)
def _one_thread():
    """Thousands of tiny forward passes: on a busy machine extra threads only wait on each other."""
    from minigpt.training.cpu_policy import one_thread

    with one_thread():
        yield


def test_every_row_repeats_its_chunk_to_the_end():
    rows, lengths = repeat_rows(200, block_size=32, seed=5)
    assert rows.shape == (200, 33) and (rows[:, 0] == 0).all() and (rows[:, 1:] > 0).all()
    for row, L in zip(rows.tolist(), lengths.tolist()):
        assert 4 <= L <= 16
        assert all(row[c] == row[c - L] for c in range(L + 1, 33))  # each letter is the one a copy earlier
    assert len(set(lengths.tolist())) > 8  # the length changes from row to row
    assert not torch.equal(rows, repeat_rows(200, block_size=32, seed=6)[0])
    assert torch.equal(rows, repeat_rows(200, block_size=32, seed=5)[0])


def test_the_masks_mark_the_first_copy_and_the_predictable_targets_by_hand():
    # chunk of 4: copies at columns 1-4, 5-8, 9-12; targets y[t] = row[t + 1]
    mask = repeated_targets(torch.tensor([4]), block_size=12)[0]
    assert [t + 1 for t in range(12) if mask[t]] == [6, 7, 8, 9, 10, 11, 12]  # column 5 cannot be foreseen
    first = first_copy_targets(torch.tensor([4]), block_size=12)[0]
    assert [t + 1 for t in range(12) if first[t]] == [1, 2, 3, 4]


def test_a_block_too_small_for_two_copies_is_refused_and_short_blocks_get_short_chunks():
    with pytest.raises(DatasetError):
        repeat_rows(3, block_size=1)
    rows, lengths = repeat_rows(50, block_size=2)
    assert (lengths == 1).all() and (rows[:, 1] == rows[:, 2]).all()
    assert len(load_repeat_dataset(block_size=6, sizes={"train": 4, "val": 4, "test": 4}).train) == 4


def test_attention_only_drops_the_feed_forward_and_keeps_the_default_model():
    plain = MiniGPT(GPTConfig(n_layers=2))
    bare = MiniGPT(GPTConfig(n_layers=2, attention_only=True))
    assert not any("ffn" in name or "ln2" in name for name, _ in bare.named_parameters())
    assert sum(p.numel() for p in bare.parameters()) == gpt_total(bare.config)
    assert sum(p.numel() for p in plain.parameters()) == gpt_total(plain.config)
    assert GPTConfig().attention_only is False and any("ffn" in n for n, _ in plain.named_parameters())
    logits, _ = bare(torch.zeros(1, 5, dtype=torch.long))
    assert logits.shape == (1, 5, 27)


def test_scores_on_hand_made_attention_maps():
    R, T = 3, 7  # ". a b c a b c"
    prev = torch.zeros(T, T)
    prev[0, 0] = 1
    for t in range(1, T):
        prev[t, t - 1] = 1
    induct = torch.eye(T)
    for t in range(R + 1, 2 * R + 1):
        induct[t] = 0
        induct[t, t - R + 1] = 1
    maps = torch.stack([prev, induct])[None, :, None]  # (n=1, layers=2, heads=1, T, T)
    assert induction.previous_token_score(maps)[:, 0].tolist() == [1.0, 0.0]
    # the second copy: positions 4, 5, 6 attend 2, 3, 4 under the induction pattern
    assert induction.induction_score(maps, R)[:, 0].tolist() == [0.0, 1.0]
    half = (maps[:, :1] + maps[:, 1:]) / 2  # a head that mixes both patterns scores half of each
    assert induction.previous_token_score(half)[0, 0] == pytest.approx(0.5)
    assert induction.induction_score(half, R)[0, 0] == pytest.approx(0.5)


def test_an_untrained_model_has_neither_head():
    torch.manual_seed(0)
    model = MiniGPT(GPTConfig(n_layers=2, n_heads=1, attention_only=True, block_size=32)).eval()
    scores = induction.head_scores(model, chunk=10)
    assert scores.previous.max() < 0.2 and scores.induction.max() < 0.2


def test_a_run_on_repeats_saves_an_attention_only_model_and_its_format(tmp_path):
    from minigpt.checkpoint import load_checkpoint
    from minigpt.runs.schema import CONFIG_VERSION
    from minigpt.training.loop import train
    from minigpt.training.options import TrainConfig, load_run_config

    cfg = TrainConfig(d_model=16, n_heads=1, n_layers=2, attention_only=True, data_format="repeats",
                      block_size=16, batch_size=8, steps=6, eval_interval=3, device="cpu", layer_every=0)
    status = train(cfg, tmp_path / "run")
    assert status["state"] == "finished" and status["data_fingerprint"] is None
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    assert saved["format_version"] == CONFIG_VERSION and saved["attention_only"] is True
    assert load_run_config(tmp_path / "run").data_format == "repeats"
    ck = load_checkpoint(tmp_path / "run" / "checkpoint")
    assert ck.model_config.attention_only and ck.model.blocks[0].ffn is None


def test_configs_before_version_5_read_as_full_blocks(tmp_path):
    from minigpt.runs.schema import read_config_values

    path = tmp_path / "config.json"
    path.write_text(json.dumps({"format": "minigpt-run-config", "format_version": 3, "model": "gpt"}))
    assert read_config_values(path)["attention_only"] is False


def test_the_bundled_model_has_a_previous_token_head_and_an_induction_head():
    """Layer 0's head looks at the position before, layer 1's at the one after the earlier copy;
    neither does the other's job, and an untrained twin does neither."""
    from minigpt.teaching.examples.induction import bundled, untrained_twin

    ck = bundled()
    assert ck.model_config.attention_only and ck.train_config["data_format"] == "repeats"
    scores = induction.head_scores(ck.model, chunk=10)
    assert scores.previous.shape == scores.induction.shape == (2, 1)
    assert scores.best("previous")[:2] == (0, 0) and scores.best("induction")[:2] == (1, 0)
    assert float(scores.previous[0, 0]) == pytest.approx(BUNDLED["previous L0H0"], abs=0.005)
    assert float(scores.induction[1, 0]) == pytest.approx(BUNDLED["induction L1H0"], abs=0.005)
    assert float(scores.previous[1, 0]) < 0.15 and float(scores.induction[0, 0]) < 0.15
    fresh = induction.head_scores(untrained_twin(ck), chunk=10)
    assert fresh.previous.max() < 0.2 and fresh.induction.max() < 0.2


def test_the_previous_token_score_is_layer_0s_attention_worked_from_the_weights():
    """Recompute layer 0's attention from the checkpoint's tensors (embeddings, norm, query and key
    projections, causal softmax) and check the score is its mean on the diagonal below."""
    from minigpt.teaching.examples.induction import bundled

    model = bundled().model
    row = induction.repeated_chunk_ids(10, n=1, seed=3)
    T = row.shape[1]
    state = {k: v.float() for k, v in model.state_dict().items()}
    x = state["tok_emb.weight"][row[0]] + state["pos_emb.weight"][:T]
    h = F.layer_norm(x, (x.shape[-1],), state["blocks.0.ln1.weight"], state["blocks.0.ln1.bias"])
    qkv = h @ state["blocks.0.attn.qkv.weight"].T + state["blocks.0.attn.qkv.bias"]  # q, k, v stacked
    d = x.shape[-1]
    q, k = qkv[:, :d], qkv[:, d:2 * d]  # one head: the whole width
    logits = (q @ k.T) / math.sqrt(q.shape[-1])
    logits = logits.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
    by_hand = logits.softmax(-1)
    maps = induction.attention_of(model, row)
    assert torch.allclose(maps[0, 0, 0], by_hand, **MODEL_OUTPUT)  # the model's sdpa vs by hand
    t = torch.arange(1, T)
    assert float(induction.previous_token_score(maps)[0, 0]) == pytest.approx(float(by_hand[t, t - 1].mean()), abs=MODEL_OUTPUT["atol"])


def test_the_bundled_model_predicts_the_repeats_and_not_the_first_copy():
    from minigpt.repeat_data import load_repeat_dataset as data_for
    from minigpt.teaching.examples.induction import bundled

    ck = bundled()
    test = data_for(block_size=ck.model_config.block_size, seed=ck.train_config["split_seed"],
                    sizes={"train": 1, "val": 1, "test": 512}).test
    losses = induction.repeat_losses(ck.model, test)
    assert losses.repeated == pytest.approx(BUNDLED["repeats"], abs=0.0005)
    assert losses.first == pytest.approx(BUNDLED["first copy"], abs=0.0005)
    assert losses.repeated < 0.3 < math.log(26) < losses.first


def test_the_lesson_examples_show_the_bundled_numbers():
    from minigpt.teaching.examples.catalog import render_example

    losses = render_example("induction.losses")
    assert "ln 26 = 3.258" in losses  # 3.2581, by hand
    assert "| trained | 3.437 | 0.168 |" in losses and "about 0.85 on the right letter" in losses  # e^-0.168
    scores = render_example("induction.scores")
    assert "| L0H0 | 0.80 | 0.00 |" in scores and "| L1H0 | 0.06 | 0.67 |" in scores
    assert "L0H0's 0.80" in scores and "L1H0's 0.67" in scores
