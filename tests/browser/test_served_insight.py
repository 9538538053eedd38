"""The training panel's inside views in a browser: a finished tiny run's surprise shading, layer
health, the step scrubber, the attention at a scrubbed step and seed groups' bands, drawn through
``minigpt serve``.

The run folder is written as a trainer writes it (status, metrics, surprise.jsonl, layers.jsonl)
with one real snapshot, so nothing trains here."""

from __future__ import annotations

import pytest
import torch

from minigpt.checkpoint import save_checkpoint
from minigpt.data import Vocab
from minigpt.models.config import GPTConfig
from minigpt.models.gpt import MiniGPT
from minigpt.runs.snapshots import snapshot_path
from tests.browser.harness import TutorPage
from tests.helpers.run_fixtures import grouped_run, write_insight, write_run

# One Chromium per worker session and served tutors per module: the browser tests stay together.
pytestmark = pytest.mark.xdist_group("browser")


def test_a_finished_runs_inside_views_draw_in_the_browser(browser, served):
    run = write_run(served.data_dir / "runs", "20260105-100000")
    write_insight(run)
    torch.manual_seed(0)
    save_checkpoint(snapshot_path(run, 200), MiniGPT(GPTConfig(vocab_size=27, block_size=16, d_model=16, n_heads=2,
                                                               n_layers=1)), Vocab(tuple(".abcdefghijklmnopqrstuvwxyz")))
    tab = TutorPage(browser, served.url)
    try:
        tab.open()
        tab.wait_for_text("Lessons read", timeout=30)  # home drawn whole: its keys are live
        tab.press("t")
        tab.wait_for_text("New training run", timeout=45)  # (the training screen's first import, under load)
        tab.press("l")  # the runs list (the form opens unfocused): the only run is highlighted
        tab.wait_for_text("20260105-100000")
        tab.press("Enter")
        units = tab.wait_for_text("ppl 8.17", "3.03 bits/char", "bigram 2.45")  # e^2.1, 2.1 / ln 2
        assert "1 layer off band" in units
        tab.press("i")
        surprise = tab.wait_for_text("Surprise at step 300", "'a' −ln p 2.10 (p 0.12)")
        assert "ava." in surprise and "bo." in surprise
        tab.screenshot("inside-surprise")
        tab.press("i")
        tab.wait_for_text("muon", "b0.ffn.down", "1 outside the band")
        tab.screenshot("inside-layers")
        tab.press("[")  # to the run's one snapshot: each view says the step it shows
        tab.wait_for_text("⏪ step 200 · surprise from 50")
        tab.press("a")  # that step's attention
        heads = tab.wait_for_text("⏪ step 200", "1 layer × 2 heads", timeout=30)
        assert "'.emma'" in heads
        tab.screenshot("inside-attention-at-step")

        # Seed groups: the compare view draws each as a band and tests the difference.
        for seed, (a, b) in zip((1, 2, 3), ((2.00, 2.10), (2.02, 2.13), (2.04, 2.13)), strict=True):
            grouped_run(served.data_dir / "runs", f"a{seed}", "lr 5e-3 ×3", seed, a)
            grouped_run(served.data_dir / "runs", f"b{seed}", "lr 1e-2 ×3", seed, b)
        tab.press("Escape")
        tab.wait_for_text("⏪ step 200 · surprise from 50")
        tab.press("v")
        tab.wait_for_text("Compare")
        tab.press("g")
        tab.wait_for_text("mean ± sd", "N 3", "paired p =", ": real", "seeds/group detect it", timeout=30)
        tab.screenshot("inside-seed-bands")
    finally:
        tab.close()
