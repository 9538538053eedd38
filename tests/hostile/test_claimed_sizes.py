"""Every size a file claims is bounded before anything is built (issue 44 item 4).

One rule per source: the training cap for what can be trained, an inference-only cap (and this
machine's free memory) for a checkpoint's ``config.json``, both counted by arithmetic from the
config, never by building a module. A vocabulary's cost is paid per pair present in the data,
never as a V×V table, and the memory estimate the trainer refuses by counts the vocabulary.
(The measured peak against the estimate: benchmarks/bench_memory.py, and the soak test below.)
"""

from __future__ import annotations

import itertools
import json
import math
import shutil
import time
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from minigpt.checkpoint import CheckpointError, load_checkpoint
from minigpt.cli import main
from minigpt.data import IGNORE
from minigpt.errors import ConfigError
from minigpt.models import build
from minigpt.models.build import build_model, check_model_size, count_parameters, planned_size
from minigpt.models.config import BigramConfig, GPTConfig, MLPConfig

REPO = Path(__file__).resolve().parents[2]
GOOD = REPO / "tests" / "fixtures" / "round1" / "runs" / "run-gpt" / "checkpoint"  # d16 L1, 27 characters
AT_ONCE_S = 1.0  # "well under a second": a refusal needs no module, no tensor


def claiming(tmp_path: Path, **model_config) -> Path:
    """A copy of a good checkpoint whose config.json claims other model sizes."""
    ck = tmp_path / "ck"
    shutil.copytree(GOOD, ck)
    cfg = json.loads((ck / "config.json").read_text())
    cfg["model_config"].update(model_config)
    (ck / "config.json").write_text(json.dumps(cfg))
    return ck


HUGE_CLAIMS = [
    pytest.param(dict(n_layers=1_000_000), id="a-million-layers"),  # round 4, row 13: hung for 300 s
    pytest.param(dict(d_model=1, n_heads=1, n_layers=1_000_000), id="a-million-thin-layers"),  # 25 M params
    pytest.param(dict(d_model=10**9, n_heads=1), id="a-billion-wide"),
    pytest.param(dict(block_size=10**9), id="a-billion-positions"),
    pytest.param(dict(d_model=8192, n_heads=1, n_layers=256), id="over-the-load-cap"),
]


@pytest.mark.parametrize("claim", HUGE_CLAIMS)
def test_load_checkpoint_refuses_a_claimed_size_at_once_naming_config_json(tmp_path, claim):
    ck = claiming(tmp_path, **claim)
    t0 = time.perf_counter()
    with pytest.raises(CheckpointError) as e:
        load_checkpoint(ck)
    assert time.perf_counter() - t0 < AT_ONCE_S
    assert str(ck / "config.json") in str(e.value) and "\n" not in str(e.value)


def test_sample_refuses_a_million_layers_in_one_line(tmp_path):
    ck = claiming(tmp_path, n_layers=1_000_000)
    t0 = time.perf_counter()
    result = CliRunner().invoke(main, ["sample", "--checkpoint", str(ck), "-n", "1"])
    assert time.perf_counter() - t0 < AT_ONCE_S
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "config.json" in lines[0], result.output


def test_the_playgrounds_loader_refuses_a_million_layers_at_once(tmp_path):
    from minigpt.playground.generation import load_for_playground

    ck = claiming(tmp_path, n_layers=1_000_000)
    t0 = time.perf_counter()
    with pytest.raises(CheckpointError, match="config.json"):
        load_for_playground(ck)
    assert time.perf_counter() - t0 < AT_ONCE_S


def test_the_parameter_explorers_checkpoint_reader_refuses_a_million_layers_at_once(tmp_path):
    from minigpt.teaching.explorers import checkpoint_numbers

    _config, learned = checkpoint_numbers(GOOD)  # a real one: its weights file's numbers, counted
    assert learned == count_parameters(load_checkpoint(GOOD).model)
    ck = claiming(tmp_path, n_layers=1_000_000)
    t0 = time.perf_counter()
    with pytest.raises(CheckpointError, match="config.json: describes a model too large"):
        checkpoint_numbers(ck)
    assert time.perf_counter() - t0 < AT_ONCE_S


def test_the_size_rule_builds_nothing(monkeypatch):
    """Counted from the config: no module is built, not even on the meta device."""
    def no_building(*_a, **_k):
        raise AssertionError("the size rule built a module")

    monkeypatch.setattr(build, "build_model", no_building)
    for kind, config in (("gpt", GPTConfig()), ("mlp", MLPConfig()), ("bigram", BigramConfig())):
        assert check_model_size(kind, config) > 0
        assert check_model_size(kind, config, verb="loads") > 0


GRID = list(itertools.product(("learned", "sinusoidal", "rope", "none"), ("layernorm", "rmsnorm"),
                              ("gelu", "swiglu", "relu2"), (False, True), (None, 2), ("off", "residual", "logits")))


@pytest.mark.parametrize("pos, norm, ffn, flag, kv_heads, bigram", GRID[::5])
def test_the_arithmetic_count_is_the_built_models(pos, norm, ffn, flag, kv_heads, bigram):
    """Parameters and elements (buffers included) as torch counts them, over the options that
    change a shape (``flag`` turns the boolean options on together)."""
    config = GPTConfig(vocab_size=11, block_size=7, d_model=16, n_heads=4, n_layers=3, pos_encoding=pos, norm=norm,
                       ffn=ffn, qk_norm=flag, tie_weights=flag, bias=not flag, n_kv_heads=kv_heads, bigram=bigram,
                       smear=flag, value_residual=flag, x0_shortcut=not flag, mtp_weight=0.5 * flag,
                       attention_only=flag and ffn == "gelu")
    model = build_model("gpt", config)  # tiny: built for real (the meta device's first sinusoid costs seconds)
    elements = sum(t.numel() for t in model.parameters()) + sum(b.numel() for b in model.buffers())
    assert planned_size("gpt", config) == (count_parameters(model), elements)


@pytest.mark.parametrize("kind, config", [("mlp", MLPConfig(vocab_size=13, context=4, n_embd=5, n_hidden=7)),
                                          ("bigram", BigramConfig(vocab_size=9))])
def test_the_arithmetic_count_of_the_other_kinds(kind, config):
    model = build_model(kind, config)
    assert planned_size(kind, config)[0] == count_parameters(model)


GPT2_SMALL = GPTConfig(vocab_size=50257, block_size=1024, d_model=768, n_heads=12, n_layers=12, tie_weights=True)


def test_a_gpt2_small_sized_checkpoint_loads_but_is_not_trained(monkeypatch):
    monkeypatch.setattr(build, "free_memory_bytes", lambda: 64 << 30)
    assert check_model_size("gpt", GPT2_SMALL, verb="loads") == 124_439_808
    with pytest.raises(ConfigError, match="more than this tutor trains"):
        check_model_size("gpt", GPT2_SMALL)


def test_the_inference_cap_is_bounded_by_free_memory(monkeypatch):
    monkeypatch.setattr(build, "free_memory_bytes", lambda: 500 << 20)
    with pytest.raises(ConfigError, match=r"would take about 0\.9 GiB, more than the 0\.5 GiB free here"):
        check_model_size("gpt", GPT2_SMALL, verb="loads")


def test_a_wide_vocabulary_bigram_is_refused_by_its_table():
    """A bigram's V×V table is the model: 16,000 characters are 256 M counts, over the cap."""
    with pytest.raises(ConfigError, match="256,000,000 parameters: more than this tutor trains"):
        check_model_size("bigram", BigramConfig(vocab_size=16_000))


# ---------------------------------------------------------------------------- the vocabulary's cost


class Pairs:
    """A split as reference_losses reads it: rows of (input, target) with padding."""

    def __init__(self, rows: list[list[int]]):
        self.rows = rows

    def __len__(self):
        return len(self.rows)

    def batch(self, index):
        chosen = [self.rows[int(i)] for i in index]
        width = max(len(r) for r in chosen) - 1
        x = torch.zeros(len(chosen), width, dtype=torch.long)
        y = torch.full((len(chosen), width), IGNORE, dtype=torch.long)
        for b, r in enumerate(chosen):
            x[b, :len(r) - 1], y[b, :len(r) - 1] = torch.tensor(r[:-1]), torch.tensor(r[1:])
        return x, y


def test_the_bigram_reference_counts_only_the_pairs_present():
    """Two million characters: a V×V table would be 32 TB; the pairs present are a handful."""
    from minigpt.training.insight import reference_losses

    V = 2_000_000
    train, val = Pairs([[0, 5, 1_999_999, 0], [0, 5, 7, 0]]), Pairs([[0, 5, 7, 0], [0, 3, 0]])
    ref = reference_losses(train, val, V)
    counts = {(0, 5): 2, (5, 1_999_999): 1, (5, 7): 1, (1_999_999, 0): 1, (7, 0): 1}
    rows = {0: 2, 5: 2, 1_999_999: 1, 7: 1}
    val_pairs = [(0, 5), (5, 7), (7, 0), (0, 3), (3, 0)]
    expected = -sum(math.log((counts.get(p, 0) + 1) / (rows.get(p[0], 0) + V)) for p in val_pairs) / len(val_pairs)
    assert ref["bigram_loss"] == pytest.approx(expected, abs=1e-5)
    assert ref["uniform_loss"] == pytest.approx(math.log(V), abs=1e-5)


def test_the_estimate_counts_the_vocabulary_linearly_and_the_evaluation_batch():
    from minigpt.models.build import EVAL_LOGITS_BYTES, RUNTIME_BYTES, training_memory_bytes
    from minigpt.training.schedule import eval_rows

    def estimate(V: int) -> int:
        config = GPTConfig(vocab_size=V, block_size=6)
        return training_memory_bytes("gpt", config, 128, planned_size("gpt", config)[0], 10.0) - RUNTIME_BYTES

    assert 1.8 < estimate(16_000) / estimate(8_000) < 2.01  # linear in V (it was V², through the bigram table)
    rows = eval_rows(6, 16_000)
    assert rows < 1024 and 4 * rows * 6 * 16_000 <= EVAL_LOGITS_BYTES  # the batch the estimate counts
    assert eval_rows(16, 27) == 1024  # the course's names: unchanged


@pytest.mark.soak
def test_a_16k_character_file_stays_within_the_file_and_the_estimate(tmp_path):
    """Round 4, row 16: a 114 KB file of 16,000 distinct characters peaked at 6.3 GB. Its peak above
    an `import torch` stays within 3× the file plus the estimate, and the estimate within 2×."""
    from benchmarks.bench_memory import measure, torch_baseline, wide_vocabulary_names

    figures = measure(wide_vocabulary_names(tmp_path / "wide.txt"), torch_baseline())
    assert figures.above_baseline <= figures.bound
    assert 0.5 <= figures.ratio <= 2.0
