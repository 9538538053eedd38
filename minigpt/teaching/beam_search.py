"""Beam search for names, with a length penalty: the search for the likeliest whole name, next to
greedy decoding and sampling.

Greedy takes the likeliest character at each step. Beam search keeps the ``width`` likeliest
partial names instead: at each step every kept name is extended by every character (and by the
end token), and the ``width`` best of all those candidates by total log-probability survive. A
candidate that ends goes to the finished list and frees its place, so the beam narrows as names
finish, and the search stops when none is left (width 1 is greedy exactly; a width as large as
every possible name is an exhaustive search).

Every character multiplies a name's probability by something below 1, so by total
log-probability the shortest common names win. A length penalty ranks the finished names by
log p / n^α instead (n: characters plus the end token): α = 0 is the raw total, α = 1 the mean per
character, which no longer punishes length.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from minigpt.data import Vocab
from minigpt.errors import SamplingError


def length_score(logprob: float, n_tokens: int, alpha: float) -> float:
    """log p / n^α: the finished names' ranking (α = 0: the probability itself)."""
    return logprob / max(n_tokens, 1) ** alpha


@dataclass
class Beam:
    ids: list[int]  # the characters after the start token (no end token)
    logprob: float  # log p of the characters and the end token
    score: float  # length_score of it

    @property
    def n_tokens(self) -> int:
        return len(self.ids) + 1

    def text(self, vocab: Vocab) -> str:
        return vocab.decode(self.ids)


def _device(model) -> torch.device:
    for t in list(model.parameters()) + list(model.buffers()):
        return t.device
    return torch.device("cpu")


@torch.no_grad()
def beam_search(model, vocab: Vocab, width: int, *, alpha: float = 0.0, prefix: str = "",
                n_best: int | None = None, min_chars: int = 0) -> list[Beam]:
    """The ``n_best`` (default ``width``) finished names the search found, best score first.

    Names longer than the model's block size minus one cannot be read back; at that length only
    the end token is a candidate. Below ``min_chars`` characters it is no candidate at all (a
    wide beam at α = 0 otherwise finds the empty name)."""
    if width < 1:
        raise SamplingError(f"a beam keeps at least one name, got width {width}")
    if not 0 <= min_chars < model.config.block_size:
        raise SamplingError(f"min_chars must be between 0 and {model.config.block_size - 1}, got {min_chars}")
    if not alpha >= 0:
        raise SamplingError(f"the length penalty β is ≥ 0, got {alpha}")
    if "." in prefix or vocab.unknown(prefix):
        raise SamplingError(f"prefix {prefix!r}: only characters of the model's vocabulary (not '.')")
    model.eval()
    max_chars = model.config.block_size - 1
    start = [0] + vocab.encode(prefix)
    if len(start) - 1 > max_chars:
        raise SamplingError(f"prefix {prefix!r} is longer than the limit of {max_chars} characters")
    alive: list[tuple[list[int], float]] = [(start, 0.0)]
    finished: list[Beam] = []
    while alive:
        x = torch.tensor([ids for ids, _ in alive], device=_device(model))
        logits, _ = model(x, last_only=True)
        logp = torch.log_softmax(logits[:, -1].float().cpu(), dim=-1)
        totals = logp + torch.tensor([lp for _, lp in alive])[:, None]
        if len(alive[0][0]) - 1 == max_chars:  # full: ending is the only way out
            totals[:, 1:] = float("-inf")
        elif len(alive[0][0]) - 1 < min_chars:
            totals[:, 0] = float("-inf")
        flat = totals.flatten()
        keep = torch.topk(flat, min(width, int(torch.isfinite(flat).sum()))).indices.tolist()
        survivors = []
        for i in keep:
            row, token = divmod(i, totals.shape[1])
            ids, total = alive[row][0], float(flat[i])
            if token == 0:
                body = ids[1:]
                finished.append(Beam(body, total, length_score(total, len(body) + 1, alpha)))
            else:
                survivors.append((ids + [token], total))
        alive = survivors
    finished.sort(key=lambda b: b.score, reverse=True)
    return finished[: n_best or width]


@torch.no_grad()
def greedy_name(model, vocab: Vocab, prefix: str = "") -> Beam:
    """The name greedy decoding writes: the likeliest character at every step (width-1 beam)."""
    return beam_search(model, vocab, 1, prefix=prefix)[0]


def mean_length(texts: list[str]) -> float:
    return sum(len(t) for t in texts) / max(len(texts), 1)
