"""A GPT-2-format folder in the browser, the way issue 53's learner walks it through ``minigpt
serve``: the attention stepper on layer 5 of 6 with their own sentence, the heads' previous-token
and induction scores, a prompt continued in the playground and its per-token surprise.

The folder holds random weights in the hub's layout (tests/helpers/gpt2_folders.py) where
``minigpt hf fetch`` keeps it; the numbers on screen are checked against the library's on the same
weights (test_pretrained_gpt2 pins the library against ``transformers``)."""

from __future__ import annotations

import math
import re

import pytest

from minigpt.pretrained.gpt2 import load_gpt2
from minigpt.teaching.induction import pretrained_head_scores
from minigpt.text_scoring import token_surprise
from tests.browser.harness import TutorPage
from tests.helpers.gpt2_folders import write_random_gpt2

# One Chromium per worker session and served tutors per module: the browser tests stay together.
pytestmark = pytest.mark.xdist_group("browser")

SENTENCE = "the cat sat"  # six pieces of the small BPE: t he ␣cat ␣ s at
SCORED = "the cat sat at the mat"


def wrapped(text: str) -> str:
    """A pattern for ``text`` wherever the terminal wraps it (each space: any run of white space)."""
    return r"\s+".join(re.escape(word) for word in text.split(" "))


def test_a_fetched_gpt2_in_the_stepper_heads_playground_and_surprise(browser, served):
    folder = write_random_gpt2(served.data_dir / "models" / "tiny-gpt2", n_layer=6)
    loaded = load_gpt2(folder)
    scores = pretrained_head_scores(loaded)
    tab = TutorPage(browser, served.url)
    try:
        tab.open()
        tab.wait_for_text("Lessons read", timeout=30)  # home drawn whole: its keys are live

        # The stepper: c lists the folder last (after the shipped models); layer 5, head 2.
        tab.press("a")
        tab.wait_for_text("X and the weights", timeout=30)
        tab.press("c")
        tab.wait_for_text("tiny-gpt2 (pretrained, continues text)")
        tab.press("End", "Enter")
        tab.wait_for_text("layer, head (from 1) and your sentence")
        tab.press("Control+u")  # empty the field, and see it empty before typing (xterm may reorder otherwise)
        tab.wait_for_text("e.g. 5 1 The cat sat")
        tab.type(f"5 2 {SENTENCE}")
        tab.press("Enter")
        tab.wait_for_text("the␣cat␣sat · layer 5/6, head 2/4 (L4H1)", "that model's own numbers", timeout=30)
        tab.wait_for_text("(L4H1) · T=6 d=33", "c Model")  # the status and footer redrawn too: keys are live
        tab.screenshot("gpt2-stepper-layer5")

        # The trained-heads grid on the same folder and sentence: the best heads, then L4H1's own scores.
        tab.press("o")
        tab.wait_for_text("Trained-model attention", timeout=30)
        tab.press("5")
        tab.wait_for_text("layers × ", timeout=30)
        tab.press("m")
        tab.wait_for_text("esc Dismiss menu")  # the list open, with the focus
        tab.press("End", "Enter")
        layer, head, best = scores.best("induction")
        tab.wait_for_match(wrapped(f"best induction: layer {layer} head {head} ({best:.2f})"), timeout=30)
        tab.wait_for_text("6 layers × 4 heads")
        tab.press("n")
        tab.wait_for_match(r"^ esc Back[ ]+▏")  # the text field has the focus (a focus lands a moment later)
        tab.press("Control+u")
        tab.wait_for_text("type a sentence")  # the field empty
        tab.type(SENTENCE)
        tab.press("Enter")  # back to the grid
        tab.wait_for_text(f"on '{SENTENCE.replace(' ', '␣')}'")
        tab.press(*["ArrowDown"] * 4, "ArrowRight", "Enter")
        tab.wait_for_match(wrapped(f"layer 4 head 1 · previous-token {float(scores.previous[4, 1]):.2f}, "
                                   f"induction {float(scores.induction[4, 1]):.2f}"))
        tab.screenshot("gpt2-head-scores")

        # The playground: the folder picked, the learner's prompt continued.
        tab.press("Escape", "Escape")  # the focused head, then the grid (the menu closed as it opened it)
        tab.wait_for_text("(L4H1) · T=6")  # the stepper, its layer kept
        tab.press("Escape")
        tab.wait_for_text("Lessons read")
        tab.press("p")
        tab.wait_for_text("names 50", timeout=30)  # the shipped model's names first
        tab.press("m")
        tab.wait_for_text("esc Dismiss menu")  # the list open, with the focus
        tab.press("End", "Enter")
        tab.wait_for_text("a pretrained model: it continues the prefix as a prompt", "names 4", timeout=30)
        tab.press("f")  # the prefix field, empty
        tab.wait_for_match(r"^[ ]+▏\^p palette")  # it has the focus: no keys in the footer
        tab.type(SENTENCE)
        tab.press("Enter")
        tab.wait_for_match(rf"^\s+1\s+{SENTENCE}\S", timeout=30)
        tab.wait_for_text("per token", "log p/token")  # GPT-2's log p: per BPE token
        tab.screenshot("gpt2-playground")

        # o: the per-token surprise of a typed text.
        tab.press("o")
        tab.wait_for_text("per-token surprise of a text")
        tab.press("Control+u")  # (the highlighted continuation, filled in)
        tab.wait_for_text("type a text, then enter")
        tab.type(SCORED)
        tab.press("Enter")
        surprise = token_surprise(loaded.model, loaded.tokenizer, SCORED)
        total = sum(math.log(s.prob) for s in surprise)
        shown = tab.wait_for_text(f"total log p {total:.3f}", f"per token {total / len(surprise):.3f}")
        assert f"{surprise[-1].prob:.3f}" in shown
        tab.screenshot("gpt2-surprise")
    finally:
        tab.close()
