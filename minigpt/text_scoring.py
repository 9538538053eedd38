"""How well a model predicts a given text: its mean loss, and the surprise of each token.

Both work through ``minigpt.tokenizer``'s interface, so they take the tutor's character models
and a loaded GPT-2 alike. The loss is the one ``transformers`` reports for ``labels=input_ids``:
the mean cross-entropy of every token after the first given the tokens before it. A text longer
than the model's context is read in windows of ``block_size`` tokens, each starting at the last
token of the one before, so every token from the second on is predicted exactly once (its
context restarts at each window; within one window the figure is transformers' exactly).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch.nn import functional as F

from minigpt.errors import SamplingError
from minigpt.tokenizer import Tokenizer

# What one evaluation reads at most: GPT-2 small predicts about a hundred tokens a second on two
# CPU cores, so this is a few minutes there; a longer file is refused before any work.
MAX_EVAL_TOKENS = 32_768


def encode_text(tokenizer: Tokenizer, text: str) -> list[int]:
    """``text`` as ids; a SamplingError when the tokenizer cannot spell it (a character model)."""
    try:
        return tokenizer.encode(text)
    except ValueError as e:
        raise SamplingError(f"the text cannot be encoded: {e}") from None


def _device(model) -> torch.device:
    return next(iter(model.parameters())).device


@torch.no_grad()
def text_loss(model, tokenizer: Tokenizer, text: str, *, max_tokens: int = MAX_EVAL_TOKENS) -> tuple[float, int]:
    """(mean next-token cross-entropy in nats, number of tokens in ``text``)."""
    ids = encode_text(tokenizer, text)
    if len(ids) < 2:
        raise SamplingError(f"the text has {len(ids)} token{'s' * (len(ids) != 1)}: a loss needs at least two "
                            f"(the first is only context)")
    if len(ids) > max_tokens:
        raise SamplingError(f"the text has {len(ids):,} tokens, more than the {max_tokens:,} one evaluation reads "
                            f"(minutes on a CPU); evaluate a shorter part of it")
    model.eval()
    block, device, total = model.config.block_size, _device(model), 0.0
    if block < 2:
        raise SamplingError("a model that sees one token at a time has no context to score a text with")
    for start in range(0, len(ids) - 1, block - 1):
        window = torch.tensor([ids[start:start + block]], device=device)
        logits, _ = model(window)
        total += float(F.cross_entropy(logits[0, :-1].float(), window[0, 1:], reduction="sum"))
    return total / (len(ids) - 1), len(ids)


@dataclass(frozen=True)
class TokenSurprise:
    piece: str  # the token as shown (minigpt.tokenizer: spaces as ␣)
    prob: float  # the probability the model gave it after the tokens before it
    best: str  # the model's most likely token there
    best_prob: float

    @property
    def bits(self) -> float:
        """Surprise, −log₂ p: one bit is a coin flip's worth of surprise."""
        return -math.log2(self.prob) if self.prob > 0 else math.inf


def token_surprise(model, tokenizer: Tokenizer, text: str) -> list[TokenSurprise]:
    """The surprise of each token of ``text`` after the first (one forward pass: at most the
    model's context, ``block_size`` tokens)."""
    return ids_surprise(model, tokenizer, encode_text(tokenizer, text))


@torch.no_grad()
def ids_surprise(model, tokenizer: Tokenizer, ids: list[int]) -> list[TokenSurprise]:
    """``token_surprise`` of a text already encoded as ``ids``."""
    block = model.config.block_size
    if len(ids) > block:
        raise SamplingError(f"the text has {len(ids):,} tokens; the model reads at most {block:,} at once")
    if len(ids) < 2:
        return []
    model.eval()
    logits, _ = model(torch.tensor([ids[:-1]], device=_device(model)))
    probs = torch.softmax(logits[0].float().cpu(), dim=-1)
    out = []
    for t, target in enumerate(ids[1:]):
        best = int(probs[t].argmax())
        out.append(TokenSurprise(tokenizer.piece(target), float(probs[t, target]), tokenizer.piece(best),
                                 float(probs[t, best])))
    return out
