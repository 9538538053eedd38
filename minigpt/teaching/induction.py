"""Induction heads, detected: how much each attention head behaves as a previous-token head or an
induction head, and what the pair does to the loss on a repeated chunk.

On a row ``. c1 … cR c1 … cR`` (a random chunk written twice; the training rows repeat it further):

- a **previous-token head** puts its weight on the position just before the query: its score is
  the mean attention from position t to t − 1;
- an **induction head**, at a second-copy position t (token c_i), looks at the position just
  after the earlier c_i, t − R + 1, whose token is the one that comes next: its score is the mean
  attention from t to t − R + 1 over the second copy.

Both scores are between 0 and 1 (a share of one query's attention), averaged over random chunks.
A uniform head over t keys scores about 1/t: the scores only mean something well above that.
An induction head needs the previous-token head below it (its key at t − R + 1 has to carry
"my previous token was c_i"), which is why it takes two layers of attention.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.nn import functional as F

from minigpt.repeat_data import LETTERS, RepeatSplit


def repeated_chunk_ids(chunk: int, n: int = 8, seed: int = 0, *, vocab_size: int | None = None,
                       start_token: int = 0) -> torch.Tensor:
    """(n, 2·chunk + 1) rows: the start token, then ``chunk`` random letters written twice; with
    ``vocab_size`` (a pretrained model) random tokens of the whole vocabulary instead, after its
    own start token (GPT-2's ``<|endoftext|>``), as interpretability tools test GPT-2's heads."""
    gen = torch.Generator().manual_seed(seed)
    low, high = (1, len(LETTERS) + 1) if vocab_size is None else (0, vocab_size)
    letters = torch.randint(low, high, (n, chunk), generator=gen)
    return torch.cat((torch.full((n, 1), start_token, dtype=torch.long), letters, letters), dim=1)


@torch.no_grad()
def attention_of(model, rows: torch.Tensor) -> torch.Tensor:
    """(n, layers, heads, T, T): every head's attention on each row."""
    return torch.stack([model.attention_maps(row[None]) for row in rows])


def previous_token_score(maps: torch.Tensor) -> torch.Tensor:
    """(layers, heads): mean attention from each position t ≥ 1 to t − 1 (maps as attention_of's)."""
    T = maps.shape[-1]
    t = torch.arange(1, T)
    return maps[..., t, t - 1].mean(dim=(0, -1))


def induction_score(maps: torch.Tensor, chunk: int) -> torch.Tensor:
    """(layers, heads): mean attention from each second-copy position t to t − chunk + 1, the
    position after the same token's first occurrence (rows as ``repeated_chunk_ids``')."""
    t = torch.arange(chunk + 1, 2 * chunk + 1)
    return maps[..., t, t - chunk + 1].mean(dim=(0, -1))


@dataclass
class HeadScores:
    previous: torch.Tensor  # (layers, heads)
    induction: torch.Tensor  # (layers, heads)

    def best(self, which: str) -> tuple[int, int, float]:
        """(layer, head, score) of the head that scores highest on ``previous`` or ``induction``."""
        scores = getattr(self, which)
        flat = int(scores.argmax())
        layer, head = divmod(flat, scores.shape[1])
        return layer, head, float(scores[layer, head])


def head_scores(model, chunk: int = 10, n: int = 8, seed: int = 0, *, vocab_size: int | None = None,
                start_token: int = 0) -> HeadScores:
    """Both scores of every head, on ``n`` random chunks of ``chunk`` letters (or tokens, with
    ``vocab_size``: see ``repeated_chunk_ids``) written twice."""
    if 2 * chunk + 1 > model.config.block_size:
        raise ValueError(f"two copies of {chunk} letters and the start token need a block of "
                         f"{2 * chunk + 1}; the model reads {model.config.block_size}")
    maps = attention_of(model, repeated_chunk_ids(chunk, n, seed, vocab_size=vocab_size, start_token=start_token))
    return HeadScores(previous_token_score(maps), induction_score(maps, chunk))


def pretrained_head_scores(ckpt, chunk: int = 10, n: int = 4, seed: int = 0) -> HeadScores:
    """Every head's two scores on a pretrained model (a ``minigpt.pretrained`` checkpoint): ``n``
    chunks of ``chunk`` random tokens of its whole vocabulary, written twice after its start token."""
    return head_scores(ckpt.model, chunk, n, seed, vocab_size=ckpt.tokenizer.size, start_token=ckpt.start_token)


@dataclass
class RepeatLosses:
    repeated: float  # mean loss on targets a copy earlier predicts (from the second copy's 2nd letter)
    first: float  # mean loss on the first copy's letters (random: ln 26 at best)
    n_repeated: int
    n_first: int


@torch.no_grad()
def repeat_losses(model, split: RepeatSplit, n: int = 512) -> RepeatLosses:
    """The model's mean cross-entropy on the predictable targets (the repeats) and on the first
    copy, over the first ``n`` rows of ``split``."""
    was = model.training
    model.eval()
    index = torch.arange(min(n, len(split)))
    x, y = split.batch(index)
    logits, _ = model(x)[:2]
    losses = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), y.reshape(-1),
                             reduction="none").view_as(y)
    model.train(was)
    repeated, first = split.repeated_mask(index), split.first_copy_mask(index)
    return RepeatLosses(float(losses[repeated].mean()), float(losses[first].mean()),
                        int(repeated.sum()), int(first.sum()))


def measure(model, split: RepeatSplit, chunk: int = 10) -> dict:
    """What the lesson shows of a model trained on repeats, as plain numbers (a lab job's result):
    both losses, every head's two scores and the best head of each kind."""
    losses = repeat_losses(model, split)
    scores = head_scores(model, chunk)
    best = {which: dict(zip(("layer", "head", "score"), scores.best(which))) for which in ("previous", "induction")}
    return {"loss_repeated": losses.repeated, "loss_first_copy": losses.first,
            "n_repeated": losses.n_repeated, "n_first_copy": losses.n_first, "chunk": chunk,
            "previous": scores.previous.tolist(), "induction": scores.induction.tolist(), "best": best}
