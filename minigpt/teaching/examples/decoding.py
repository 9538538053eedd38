"""Worked examples for the decoding controls in "Sampling": repetition penalty and min-p on the
shipped MiniGPT's real next-character distributions."""

from __future__ import annotations

import torch

from minigpt.teaching import decoding
from minigpt.teaching.examples.registry import example, fmt, table

PENALTY = 1.3
MIN_P, TOP_P = 0.1, 0.9


@example("decoding.repetition", f"Repetition penalty θ = {PENALTY} after “lil”")
def _repetition() -> str:
    logits, vocab, seen = decoding.shipped_distribution("lil")
    penalised = decoding.repetition_penalty(logits, seen, PENALTY)
    before, after = torch.softmax(logits, -1), torch.softmax(penalised, -1)
    rows = []
    for i in torch.argsort(before, descending=True)[:6].tolist():
        rows.append([vocab.chars[i], "yes" if i in seen else "", fmt(logits[i].item(), 3),
                     fmt(penalised[i].item(), 3), fmt(before[i].item(), 3),
                     fmt(after[i].item(), 3)])
    return (table(["next", "in “lil”", "logit", "penalised", "p before", "p after"], rows)
            + f"\n\nThe shipped model's six likeliest next characters. The logits of "
              f"{' and '.join(sorted({vocab.chars[i] for i in seen}))}, already in the name, "
              f"are divided by {PENALTY}; the others keep theirs, and "
              "the softmax shares the freed probability among them. A penalty counts each "
              "seen token once, however often it appeared.")


@example("decoding.min_p", f"How many characters min-p = {MIN_P} and top-p = {TOP_P} keep")
def _min_p() -> str:
    rows, more = [], []
    for context in ("kri", "ann", "mar"):
        logits, _, _ = decoding.shipped_distribution(context)
        for temperature in (1.0, 2.0):
            probs = torch.softmax(logits / temperature, -1)
            by_min_p, by_top_p = int(decoding.min_p_keep(probs, MIN_P).sum()), decoding.top_p_count(probs, TOP_P)
            rows.append([context, fmt(temperature, 1), fmt(probs.max().item(), 3),
                         fmt(MIN_P * probs.max().item(), 3), by_min_p, by_top_p])
            if by_min_p > by_top_p:
                more.append(f"after “{context}” at T = {fmt(temperature, 1)} ({by_min_p} "
                            f"against {by_top_p})")
    reversal = (" and ".join(more) + ", where no character stands out and the bar falls "
                "below almost all of them" if more else "in none of these rows")
    return (table(["after", "T", "top p", "min-p bar", "min-p keeps", "top-p keeps"], rows)
            + "\n\nThe bar is min_p times the top probability, so it falls when the model is "
              "unsure and rises when it is sure. When one character still leads at T = 2, "
              "min-p keeps only those within a factor of ten of it while the flattened tail "
              "fills top-p's nucleus. On a flat distribution it goes the other way: min-p "
              f"keeps more than top-p {reversal}.")
