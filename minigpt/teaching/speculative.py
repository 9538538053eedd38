"""Speculative decoding, run on our own models: a cheap draft (the bigram or the MLP) proposes k
characters, the MiniGPT checks them all in one forward pass, and the names that come out are
distributed exactly as if the MiniGPT had sampled them one character at a time.

One round, with p the target's next-character distribution and q the draft's:

1. the draft samples x₁ … x_k, one after the other (stopping early at the end token);
2. the target runs once on the prefix plus the drafts: that gives p at each drafted position and
   one more, after the last draft;
3. each draft x_i is kept with probability min(1, p(x_i) / q(x_i)); at the first one refused, a
   replacement is drawn from norm(max(0, p − q)) and the round ends;
4. if all k were kept, one more character is drawn from the extra p: k + 1 characters for one
   call of the target.

Step 3 keeps x with probability q(x)·min(1, p/q) = min(p, q); a refusal happens with probability
1 − Σ min(p, q) and then gives x with probability proportional to p(x) − min(p(x), q(x)). The two
add up to p(x): the output is the target's, whatever the draft (``one_step_distribution`` computes
it). A draft close to the target is refused rarely, so each call yields more characters.

Names end at the end token ``.``; a name that reaches the target's block size is cut there, as
``minigpt.sampling.generate`` cuts it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from minigpt.errors import SamplingError


@dataclass
class SpeculativeStats:
    target_calls: int = 0  # forward passes of the target (the expensive model)
    draft_calls: int = 0  # forward passes of the draft
    drafted: int = 0  # characters the draft proposed
    checked: int = 0  # of those, the ones the check reached (none after the first refusal)
    accepted: int = 0  # of those, kept by the target's check
    tokens: int = 0  # characters (and end tokens) produced

    @property
    def acceptance_rate(self) -> float:
        """Kept / checked: the chance a draft survives its check (drafts after a refusal are
        thrown away unchecked; they count in ``wasted``, not here)."""
        return self.accepted / self.checked if self.checked else 0.0

    @property
    def wasted(self) -> int:
        """Drafts never checked because an earlier one in their round was refused."""
        return self.drafted - self.checked

    @property
    def tokens_per_call(self) -> float:
        return self.tokens / self.target_calls if self.target_calls else 0.0

    def add(self, other: SpeculativeStats) -> None:
        for name in ("target_calls", "draft_calls", "drafted", "checked", "accepted", "tokens"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


def residual(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """norm(max(0, p − q)): what a refused draft is replaced from. When q covers p everywhere
    (p = q) nothing is left and nothing is ever refused; p itself is returned."""
    left = (p - q).clamp(min=0)
    total = left.sum()
    return left / total if total > 0 else p


def acceptance(p: torch.Tensor, q: torch.Tensor) -> float:
    """α = Σ min(p, q): the chance that one draft drawn from q is kept (1 − total variation)."""
    return float(torch.minimum(p, q).sum())


def one_step_distribution(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """The exact distribution of the character one check emits: kept drafts, min(p, q), plus the
    refusals' replacements, (1 − α)·residual. It equals p (the tests check it to rounding)."""
    return torch.minimum(p, q) + (1 - acceptance(p, q)) * residual(p, q)


def expected_tokens_per_call(alpha: float, k: int) -> float:
    """Characters per target call when every draft is kept with the same chance α:
    1 + α + … + α^k = (1 − α^(k+1)) / (1 − α) (the end token ignored)."""
    return float(k + 1) if alpha >= 1 else (1 - alpha ** (k + 1)) / (1 - alpha)


def walltime_speedup(alpha: float, k: int, cost_ratio: float) -> float:
    """Expected wall-time speed-up over plain decoding when one draft step costs ``cost_ratio``
    (c) times a target step (Leviathan et al. 2023, theorem 3.8): a round costs k·c + 1 target
    steps and yields (1 − α^(k+1))/(1 − α) tokens, so (1 − α^(k+1)) / ((1 − α)(c·k + 1))."""
    return expected_tokens_per_call(alpha, k) / (cost_ratio * k + 1)


def _device(model) -> torch.device:
    for t in list(model.parameters()) + list(model.buffers()):
        return t.device
    return torch.device("cpu")


@torch.no_grad()
def _probs(model, seq: list[int], last: int) -> torch.Tensor:
    """(last, V) next-token probabilities at the last ``last`` positions of ``seq``."""
    logits, _ = model(torch.tensor([seq], device=_device(model)))
    return torch.softmax(logits[0, -last:].float().cpu(), dim=-1)


def _draw(probs: torch.Tensor, gen: torch.Generator) -> int:
    return int(torch.multinomial(probs, 1, generator=gen))


def verify(p_rows: torch.Tensor, q_rows: torch.Tensor, drafts: list[int], gen: torch.Generator
           ) -> tuple[list[int], int]:
    """The characters one round emits, and how many drafts were kept. ``p_rows`` holds the
    target's distribution at each drafted position and one more (len(drafts) + 1 rows), ``q_rows``
    the draft's at each drafted position."""
    out = []
    for i, x in enumerate(drafts):
        p, q = p_rows[i], q_rows[i]
        if float(torch.rand(1, generator=gen)) < min(1.0, float(p[x] / q[x])):
            out.append(x)
            if x == 0:  # the name ended: nothing after it is looked at
                return out, i + 1
            continue
        out.append(_draw(residual(p, q), gen))
        return out, i
    out.append(_draw(p_rows[len(drafts)], gen))  # every draft kept: the target's extra position
    return out, len(drafts)


def speculative_sample(target, draft, k: int, gen: torch.Generator) -> tuple[list[int], bool, SpeculativeStats]:
    """One name from ``target`` (ids after the start token, without the end token), whether it
    ended before the block size, and the round counts; ``draft`` proposes ``k`` per round."""
    if k < 1:
        raise SamplingError(f"the draft proposes at least one character a round, got k = {k}")
    block = target.config.block_size
    seq, stats = [0], SpeculativeStats()
    while True:
        drafts, q_rows, ctx = [], [], list(seq)
        for _ in range(min(k, block - len(seq))):  # the target reads at most block positions
            q = _probs(draft, ctx[-draft.config.block_size:], 1)[0]
            stats.draft_calls += 1
            x = _draw(q, gen)
            drafts.append(x)
            q_rows.append(q)
            ctx.append(x)
            if x == 0:
                break
        p_rows = _probs(target, seq + drafts, len(drafts) + 1)
        stats.target_calls += 1
        emitted, kept = verify(p_rows, torch.stack(q_rows) if q_rows else p_rows[:0], drafts, gen)
        stats.drafted += len(drafts)
        stats.checked += min(kept + 1, len(drafts))  # the kept ones and the refused one, if any
        stats.accepted += kept
        stats.tokens += len(emitted)
        seq += emitted
        if seq[-1] == 0:
            return seq[1:-1], True, stats
        if len(seq) > block:  # the character after a full block is not part of the name: cut
            return seq[1:block], False, stats


@dataclass
class DraftLengthResult:
    k: int
    stats: SpeculativeStats
    mean_alpha: float  # Σ min(p, q) averaged over the positions checked

    @property
    def predicted_tokens_per_call(self) -> float:
        return expected_tokens_per_call(self.mean_alpha, self.k)


def measure_draft_lengths(target, draft, ks: tuple[int, ...] = (1, 2, 4, 8), n: int = 100,
                          seed: int = 0) -> list[DraftLengthResult]:
    """For each draft length k, ``n`` names sampled speculatively (the same seed for every k):
    acceptance rate, characters per target call, and the mean α along the names."""
    from minigpt.training.cpu_policy import one_thread

    out = []
    with one_thread():  # thousands of tiny forward passes: extra threads only wait on each other
        for k in ks:
            gen = torch.Generator().manual_seed(seed)
            total, alphas = SpeculativeStats(), []
            for _ in range(n):
                ids, finished, stats = speculative_sample(target, draft, k, gen)
                total.add(stats)
                alphas += position_alphas(target, draft, ids, finished)
            out.append(DraftLengthResult(k, total, sum(alphas) / max(len(alphas), 1)))
    return out


@torch.no_grad()
def position_alphas(target, draft, ids: list[int], finished: bool = True) -> list[float]:
    """α = Σ min(p, q) at each position of one name (its end token included when it ended)."""
    seq = [0] + list(ids)
    steps = len(seq) if finished else len(seq) - 1  # a cut name has no prediction after it
    p_rows = _probs(target, seq, len(seq))
    out = []
    for t in range(steps):
        ctx = seq[: t + 1][-draft.config.block_size:]
        out.append(acceptance(p_rows[t], _probs(draft, ctx, 1)[0]))
    return out
