"""A kata in the browser, served with ``--allow-code``: the attention kata without its scale (the
mistake named), fixed by typing, passed, and counted on the stats screen."""

from __future__ import annotations

import pytest

from minigpt.katas import history
from minigpt.katas.catalogue import load_katas
from minigpt.store import Store
from tests.browser.harness import ServedTutor, TutorPage

# One Chromium per worker session and served tutors per module: the browser tests stay together.
pytestmark = pytest.mark.xdist_group("browser")


NO_SCALE = """import math

import torch


def attention(q, k, v, causal=False):
    s = q @ k.transpose(-2, -1)
    if causal:
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(s, dim=-1) @ v
"""


@pytest.fixture(scope="module")
def served_with_code(tmp_path_factory):
    folder = tmp_path_factory.mktemp("served-katas")
    data = folder / "data"
    data.mkdir()
    history.save_draft(Store(data / "progress.sqlite3"), "attention", NO_SCALE)  # the learner's last draft
    server = ServedTutor(data, "--allow-code", log_path=folder / "serve.log").start()
    yield server
    server.stop()


def test_attention_kata_fails_named_then_passes_and_counts(browser, served_with_code):
    tab = TutorPage(browser, served_with_code.url)
    try:
        tab.open()
        tab.press("k")
        tab.wait_for_text("Katas", "attention")
        tab.press("ArrowDown")
        tab.wait_for_text("Practises: scaled-dot-product, causal-masking")
        tab.press("Enter")
        tab.wait_for_text("Kata: attention", "s = q @ k.transpose(-2, -1)")
        tab.press("Control+r")
        tab.wait_for_text("the scores were not divided by √d_k", timeout=90)
        tab.screenshot("kata-named-mistake")
        for key in ["PageUp", *["ArrowDown"] * 6, "End"]:  # to the end of line 7, one key at a time
            tab.page.keyboard.press(key, delay=40)
        tab.type(" / math.sqrt(q.shape[-1])")
        tab.wait_for_text("s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])")
        tab.press("Control+r")
        tab.wait_for_text("All 7 cases pass", timeout=90)
        tab.screenshot("kata-passed")
        tab.press("Escape", "Escape")
        tab.wait_for_text(f"1/{len(load_katas())} passed")
        tab.press("Escape")
        tab.wait_for_text("Learn how GPT works")
        tab.press("s")
        tab.wait_for_text(f"Katas passed 1 of {len(load_katas())}")
    finally:
        tab.close()
