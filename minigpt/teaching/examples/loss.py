"""Worked examples for "The loss, exactly"."""

from __future__ import annotations

import math

import torch
from torch.nn import functional as F

from minigpt.teaching import loss_maths
from minigpt.teaching.examples.registry import example, fmt, table

LOGITS = [2.0, 1.0, 0.1, -1.0]
CHARS = ["a", "e", "i", "o"]
BIG_LOGITS = [100.0, 90.0, 80.0]


@example("loss.step_by_step", "From logits to the loss for one position (target “e”)")
def _steps() -> str:
    z = torch.tensor(LOGITS, dtype=torch.float64)
    p = z.softmax(-1)
    logp = loss_maths.log_softmax_stable(z)
    rows = [[c, fmt(z[i].item(), 1), fmt(math.exp(z[i].item()), 3), fmt(p[i].item(), 3),
             fmt(logp[i].item(), 3)] for i, c in enumerate(CHARS)]
    total = torch.exp(z).sum().item()
    return (table(["char", "logit z", "e^z", "p = e^z / Σ", "log p"], rows)
            + f"\n\nΣ e^z = {fmt(total, 3)}. The target is “e”: loss = −log p(e) = "
              f"{fmt(loss_maths.nll(z, 1), 3)}; F.cross_entropy gives "
              f"{fmt(F.cross_entropy(z[None], torch.tensor([1])).item(), 3)}.")


@example("loss.overflow", "Why the maximum is subtracted: logits 100, 90, 80 in float32")
def _overflow() -> str:
    z32 = torch.tensor(BIG_LOGITS, dtype=torch.float32)
    naive = loss_maths.log_softmax_naive(z32)
    stable = loss_maths.log_softmax_stable(z32)
    exact = loss_maths.log_softmax_stable(torch.tensor(BIG_LOGITS, dtype=torch.float64))
    def shown(v: float) -> str:  # NaN is what float32 gives; the table says where it comes from
        return "∞/∞: undefined" if math.isnan(v) else fmt(v, 5)

    rows = [[f"z = {v:g}", shown(naive[i].item()), fmt(stable[i].item(), 5), fmt(exact[i].item(), 5)]
            for i, v in enumerate(BIG_LOGITS)]
    e100 = torch.exp(torch.tensor(100.0)).item()
    return (table(["", "naive (float32)", "max subtracted", "float64"], rows)
            + f"\n\ne^100 in float32 is {e100} (the largest float32 is about 3.4e38 ≈ e^88.7), "
              "so the naive formula divides infinity by infinity (and log 0 = −∞ for z = 80, whose e^z is finite). After subtracting the maximum "
              "the exponents are 0, −10, −20: nothing overflows and nothing is lost.")


@example("loss.teacher_forcing", "Teacher forcing on “emma” with the shipped MiniGPT")
def _teacher_forcing() -> str:
    from minigpt.checkpoint import load_checkpoint
    from minigpt.paths import default_checkpoint

    ck = load_checkpoint(default_checkpoint())
    ck.model.eval()
    rows = loss_maths.teacher_forcing_rows(ck.model, ck.vocab, "emma")
    loss = sum(-math.log(p) for _, _, p in rows) / len(rows)
    return (table(["fed (true prefix)", "next", "p(next)", "−log p"],
                  [[prefix, nxt, fmt(p, 3), fmt(-math.log(p), 3)] for prefix, nxt, p in rows])
            + f"\n\nOne forward pass scores all {len(rows)} positions at once, each fed the true "
              f"prefix, never the model's own guesses. The name's loss is the mean: "
              f"{fmt(loss, 3)} nats.")


@example("loss.perplexity_bits", "Our models' measured losses as perplexity and bits per character")
def _perplexity() -> str:
    from minigpt.checkpoint import read_checkpoint_config
    from minigpt.paths import checkpoints_dir

    rows = [["uniform over 27", fmt(math.log(27), 3), fmt(27.0, 2), fmt(loss_maths.bits_per_token(math.log(27)), 3)]]
    for folder, label in (("bigram", "bigram"), ("mlp", "MLP"), ("default", "MiniGPT")):
        loss = read_checkpoint_config(checkpoints_dir() / folder)["metrics"]["val_loss"]
        rows.append([label, fmt(loss, 3), fmt(loss_maths.perplexity(loss), 2),
                     fmt(loss_maths.bits_per_token(loss), 3)])
    ppl = loss_maths.perplexity(loss)
    return (table(["model", "val loss (nats)", "perplexity e^loss", "bits/char"], rows)
            + f"\n\nLosses are the shipped checkpoints' own validation figures. MiniGPT's "
              f"perplexity of {fmt(ppl, 1)} means it is, on average, as unsure as a fair pick "
              f"among about {round(ppl)} characters, against 27 for a uniform guess.")


@example("loss.label_smoothing", "Label smoothing on a confident prediction")
def _smoothing() -> str:
    z = torch.tensor([6.0, 1.0, 0.0, -1.0], dtype=torch.float64)
    rows = []
    for eps in (0.0, 0.1, 0.2):
        ours = loss_maths.label_smoothed_loss(z, 0, eps)
        torch_value = F.cross_entropy(z[None], torch.tensor([0]), label_smoothing=eps).item()
        rows.append([fmt(eps, 1), fmt(ours, 4), fmt(torch_value, 4)])
    p = z.softmax(-1)[0].item()
    return (f"Logits 6, 1, 0, −1 with the right answer first: p = {fmt(p, 4)}.\n\n"
            + table(["ε", "(1−ε)·NLL + ε·mean(−log p)", "PyTorch"], rows)
            + "\n\nWith ε > 0 the loss can no longer reach 0 by pushing p to 1: part of the "
              "target is spread over every class, which discourages over-confident logits.")
