"""Numbers the trainer does not record, measured once a run has finished: ``extras.json``.

- ``train_loss``: the best checkpoint's loss on (a fixed part of) its training names in eval mode.
  The training log's loss is measured with dropout on and averaged over a moving model, so the
  dropout exercise's train/val gap is taken from this one instead.
- ``long_loss``: for the position-encoding exercise, the loss on names longer than any the run
  was trained on (the length-generalisation check).

Both are measured on names (data format lines); a run on a text or on generated rows has none.
"""

from __future__ import annotations

import json
from pathlib import Path

from minigpt import guarded
from minigpt.runs.files import BEST_DIR, write_json_atomic

EXTRAS_FILE = "extras.json"
TRAIN_SAMPLE = 4096  # names: enough for three decimals, a fraction of a second for small models


def read_extras(run_dir: Path | str) -> dict:
    try:
        value = json.loads(guarded.read_text(Path(run_dir) / EXTRAS_FILE, guarded.SMALL_JSON_BYTES))
        return value if isinstance(value, dict) else {}
    except (OSError, ValueError):
        return {}


def compute_extras(run_dir: Path | str, long_data: Path | None = None) -> dict:
    """Measure and write the run's extras (the scheduler calls it in a thread, off its loop)."""
    import torch

    run_dir = Path(run_dir)
    # One thread while measuring: the next run is already training on the other cores. The setting
    # is the whole process's, so it is given back (a caller's later work keeps its threads).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _measure(run_dir, long_data)
    finally:
        torch.set_num_threads(threads)


def _measure(run_dir: Path, long_data: Path | None) -> dict:
    from minigpt.checkpoint import load_checkpoint
    from minigpt.data import EncodedSplit, load_words
    from minigpt.training.options import load_data_for, load_run_config
    from minigpt.training.schedule import evaluate

    cfg = load_run_config(run_dir)
    if cfg.data_format != "lines":  # windows of a text or of generated rows: no names to measure
        write_json_atomic(run_dir / EXTRAS_FILE, {})
        return {}
    ckpt = load_checkpoint(run_dir / BEST_DIR, device="cpu")
    block = ckpt.model_config.block_size
    data = load_data_for(cfg, vocab=ckpt.vocab, block_size=block)
    words = data.splits.train[:TRAIN_SAMPLE]
    extras = {"train_loss": evaluate(ckpt.model, EncodedSplit(words, ckpt.vocab, block)),
              "train_names": len(words)}
    if long_data is not None and Path(long_data).is_file():
        known = set(ckpt.vocab.chars)
        long_words = [w for w in load_words(long_data) if len(w) < block and set(w) <= known]
        if long_words:
            extras["long_loss"] = evaluate(ckpt.model, EncodedSplit(long_words, ckpt.vocab, block))
            extras["long_names"] = len(long_words)
            extras["long_min_length"] = min(len(w) for w in long_words)
    write_json_atomic(run_dir / EXTRAS_FILE, extras)
    return extras
