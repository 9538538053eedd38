"""Character-level text: splits, windows and vocabulary pinned by hand; a short run learns; prompts continue."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import torch

from minigpt.errors import DatasetError
from minigpt.text_data import WindowSplit, load_text_dataset, text_vocab

REPO = Path(__file__).resolve().parent.parent


def test_vocabulary_splits_and_windows_by_hand(tmp_path):
    text = "abcab\n" * 20  # 120 characters
    f = tmp_path / "t.txt"
    f.write_text(text)
    ds = load_text_dataset(f, block_size=4)
    assert ds.vocab.chars == (".", "\n", "a", "b", "c")
    # first 90% (108 characters) trains, the last 12 validate, contiguous
    assert len(ds.train.ids) == 108 and len(ds.val.ids) == 12
    assert ds.vocab.decode(ds.val.ids) == text[108:]
    # training windows: any start; x = 4 characters, y = the same shifted by one
    assert len(ds.train) == 108 - 4
    x, y = ds.train.batch(torch.tensor([0, 2]))
    assert ds.vocab.decode(x[0]) == "abca" and ds.vocab.decode(y[0]) == "bcab"
    assert ds.vocab.decode(x[1]) == "cab\n" and ds.vocab.decode(y[1]) == "ab\na"
    # evaluation: fixed, non-overlapping windows from the start of the stretch (12 chars, T=4: starts 0, 4)
    assert ds.val.starts.tolist() == [0, 4] and ds.test is ds.val
    assert ds.membership("abc") == "new"


def test_evaluation_windows_are_bounded_and_spread(tmp_path):
    ids = torch.arange(100_000) % 7
    split = WindowSplit.for_evaluation(ids, 8)
    assert len(split) == 2048 and split.starts[0] == 0 and split.starts[-1] == (100_000 - 8 - 1) // 8 * 8


@pytest.mark.parametrize("content, message", [
    (b"", "empty"), (b"\x00\x01binary", "binary"), (b"short text", "too short"), (b"\xff\xfe bad", "UTF-8"),
])
def test_bad_text_files_get_a_clear_error(tmp_path, content, message):
    f = tmp_path / "t.txt"
    f.write_bytes(content)
    with pytest.raises(DatasetError, match=message):
        load_text_dataset(f, block_size=8)


def test_vocab_keeps_dot_as_an_ordinary_character():
    assert text_vocab("a.b").chars == (".", "a", "b")


def test_a_short_run_learns_below_the_unigram_entropy_and_continues_a_prompt(tmp_path):
    import random

    rng = random.Random(0)
    words = ["the cat sat", "a dog ran", "my cat ran", "the dog sat"]
    text = ". ".join(rng.choice(words) for _ in range(900)) + "."
    f = tmp_path / "story.txt"
    f.write_text(text)
    counts = Counter(text)
    unigram = -sum(c / len(text) * math.log(c / len(text)) for c in counts.values())
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = tmp_path / "run"
    r = subprocess.run([sys.executable, "-m", "minigpt.cli", "train", "--data", str(f), "--format", "text",
                        "--block-size", "16", "--d-model", "32", "--n-heads", "2", "--n-layers", "2",
                        "--steps", "60", "--eval-interval", "30", "--device", "cpu", "--out", str(run), "-q"],  # val 0.37 at 60 steps
                       env=env, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    status = json.loads((run / "status.json").read_text())
    assert status["val_loss"] < unigram - 0.5, (status["val_loss"], unigram)
    config = json.loads((run / "checkpoint" / "config.json").read_text())
    assert "text" in json.dumps(config)  # the checkpoint records its data format
    out = subprocess.run([sys.executable, "-m", "minigpt.cli", "sample", "--checkpoint", str(run), "--prefix",
                          "the ", "--max-len", "40", "-n", "2", "--seed", "1", "--json"],
                         env=env, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    samples = json.loads(out.stdout)
    assert len(samples) == 2 and all(s["prompt"] == "the " and len(s["text"]) == 40 for s in samples)
    # it has learned the words: most generated words are ones of the text
    generated = " ".join(s["text"] for s in samples).replace(".", " ").split()
    known = set(" ".join(words).split())
    assert sum(w in known for w in generated) >= len(generated) // 2


def test_the_playground_continues_a_prompt_with_a_text_model(tmp_path):
    from minigpt.playground.generation import Settings, load_for_playground, run_batch
    from minigpt.training.loop import train
    from minigpt.training.options import TrainConfig

    f = tmp_path / "t.txt"
    f.write_text("the cat sat on the mat. " * 60)
    cfg = TrainConfig(data=str(f), data_format="text", block_size=16, d_model=16, n_heads=2, n_layers=1,
                      steps=40, eval_interval=40, device="cpu")
    train(cfg, tmp_path / "run")
    loaded = load_for_playground(tmp_path / "run" / "checkpoint")
    assert loaded.is_text and loaded.dataset is None and "prompt" in loaded.dataset_note
    batch = run_batch(loaded, Settings(n=3, prefix="the ", max_len=30, seed=2, top_k=5))
    assert len(batch.samples) == 3
    assert all(s.text.startswith("the ") and len(s.text) == 34 for s in batch.samples)
    again = run_batch(loaded, Settings(n=3, prefix="the ", max_len=30, seed=2, top_k=5))
    assert [s.text for s in again.samples] == [s.text for s in batch.samples]  # same seed, same text
