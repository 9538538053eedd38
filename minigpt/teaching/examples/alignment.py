"""Worked example for "After pre-training": the DPO loss on toy log-probabilities."""

from __future__ import annotations

import math

from minigpt.teaching.examples.registry import example, fmt, table
from minigpt.teaching.loss_maths import dpo_loss

BETA = 0.1
# (label, policy chosen, policy rejected, reference chosen, reference rejected): log-probs of
# whole answers, made up but of a realistic size (a 20-token answer has log-prob around −20 to −40)
CASES = (
    ("before tuning (policy = reference)", -25.0, -30.0, -25.0, -30.0),
    ("chosen up 5, rejected unchanged", -20.0, -30.0, -25.0, -30.0),
    ("chosen up 10, rejected down 10", -15.0, -40.0, -25.0, -30.0),
    ("wrong way: rejected up 5", -25.0, -25.0, -25.0, -30.0),
)


@example("dpo.toy", "The DPO loss on toy log-probabilities (β = 0.1)")
def _dpo() -> str:
    rows = []
    for label, pc, pr, rc, rr in CASES:
        margin = (pc - rc) - (pr - rr)
        rows.append([label, fmt(margin, 0), fmt(dpo_loss(pc, pr, rc, rr, BETA), 3)])
    return (table(["policy", "margin", "loss"], rows)
            + "\n\nmargin = (log π(chosen) − log π_ref(chosen)) − (log π(rejected) − "
              f"log π_ref(rejected)); loss = −log σ(β·margin). At the start the margin is 0 and "
              f"the loss is ln 2 = {fmt(math.log(2), 3)}; it falls as the model moves probability "
              "towards the preferred answer relative to the reference, and rises if it moves "
              "the wrong way.")
