"""Self-speculation: a MiniGPT trained with ``mtp_weight`` > 0 drafts with its own second head.

That head reads the same final vector as the main head and guesses the character after next, so
one forward pass gives the main head's distribution p for the next place and the second head's
q for the place after it. A round feeds the confirmed name plus the pending draft d (drawn from
the q of an earlier pass) and

1. keeps d with probability min(1, p(d) / q(d)), p read at d's place; if kept, one more character
   comes from the main head at d's own position (two characters for the call), and the second
   head there drafts the next d;
2. otherwise a replacement is drawn from norm(max(0, p − q)) (``speculative.residual``), and the
   second head at the last confirmed position, which already guessed the place after the
   replacement, gives the next d.

Every character that comes out is the main head's own (the check of ``speculative.verify``, with
γ = 1), so names follow plain sampling's distribution; greedy (``greedy=True``) keeps d only when
it is the main head's argmax and gives exactly greedy decoding's names. The draft costs one
d × V matrix product per call, no second model.

Both loops here run one name at a time and feed the whole prefix each call (no KV cache, as
``speculative.speculative_sample`` does), so their wall times compare like with like.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from minigpt.errors import SamplingError
from minigpt.models.speedrun import softcap
from minigpt.teaching.speculative import SpeculativeStats, residual

# (ids of the sequence so far) → (main-head logits, second-head logits), each (T, V) float
Heads = Callable[[list[int]], tuple[torch.Tensor, torch.Tensor]]


def minigpt_heads(model) -> Heads:
    """Both heads of a MiniGPT with a second (multi-token prediction) head, from one forward pass."""
    if getattr(model, "mtp_head", None) is None:
        raise SamplingError("this MiniGPT has no second head to draft with (train it with mtp_weight > 0)")
    device = next(model.parameters()).device
    cap = model.config.softcap

    @torch.no_grad()
    def heads(seq: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
        seen = {}
        hook = model.ln_f.register_forward_hook(lambda _m, _i, out: seen.__setitem__("x", out))
        try:
            logits, _ = model(torch.tensor([seq], device=device))
        finally:
            hook.remove()
        after_next = softcap(model.mtp_head(seen["x"][0]), cap)
        return logits[0].float().cpu(), after_next.float().cpu()

    return heads


def _pick(probs: torch.Tensor, gen: torch.Generator | None) -> int:
    return int(probs.argmax()) if gen is None else int(torch.multinomial(probs, 1, generator=gen))


def _keep(p: torch.Tensor, q: torch.Tensor, d: int, gen: torch.Generator | None) -> bool:
    if gen is None:
        return d == int(p.argmax())
    return float(torch.rand(1, generator=gen)) < min(1.0, float(p[d] / q[d]))


def self_speculative_sample(heads: Heads, block: int, gen: torch.Generator | None
                            ) -> tuple[list[int], bool, SpeculativeStats]:
    """One name (ids without the start and end tokens), whether it ended before the block size, and
    the counts. ``gen`` None means greedy."""
    seq, stats = [0], SpeculativeStats()
    draft, q_draft = None, None
    while True:
        n = len(seq)
        main, second = heads(seq + ([draft] if draft is not None else []))
        p, q = torch.softmax(main[n - 1:], -1), torch.softmax(second[n - 1:], -1)
        stats.target_calls += 1
        if draft is None:
            emitted, next_q = [_pick(p[0], gen)], q[0]
        else:
            stats.drafted += 1
            stats.checked += 1
            if _keep(p[0], q_draft, draft, gen):
                stats.accepted += 1
                emitted, next_q = [draft], q[1]
                if draft != 0:
                    emitted.append(_pick(p[1], gen))
            else:
                fix = p[0] if gen is None else residual(p[0], q_draft)
                emitted, next_q = [_pick(fix, gen)], q[0]
        seq += emitted
        stats.tokens += len(emitted)
        if seq[-1] == 0:
            return seq[1:-1], True, stats
        if len(seq) > block:  # as minigpt.sampling.generate: the name is cut at the block size
            return seq[1:block], False, stats
        draft, q_draft = None, None
        if len(seq) < block:  # the target reads the draft too: at most block positions
            draft, q_draft = _pick(next_q, gen), next_q
            stats.draft_calls += 1


def plain_sample(heads: Heads, block: int, gen: torch.Generator | None) -> tuple[list[int], bool, int]:
    """One name the ordinary way, one main-head call a character; its ids, ended, and calls."""
    seq, calls = [0], 0
    while True:
        main, _ = heads(seq)
        calls += 1
        seq.append(_pick(torch.softmax(main[-1], -1), gen))
        if seq[-1] == 0:
            return seq[1:-1], True, calls
        if len(seq) > block:
            return seq[1:block], False, calls


def main_only(model) -> Heads:
    """The main head alone (the second returned empty): what plain decoding pays per call."""
    device = next(model.parameters()).device

    @torch.no_grad()
    def heads(seq: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
        logits, _ = model(torch.tensor([seq], device=device))
        return logits[0].float().cpu(), logits[0, :0].float().cpu()

    return heads


@dataclass
class Timed:
    names: list[str]
    seconds: float
    target_calls: int
    stats: SpeculativeStats | None = None


def time_plain(model, vocab, n: int, seed: int, greedy: bool = False) -> Timed:
    heads, block = main_only(model), model.config.block_size
    gen = None if greedy else torch.Generator().manual_seed(seed)
    names, calls, t = [], 0, time.perf_counter()
    for _ in range(n):
        ids, _, c = plain_sample(heads, block, gen)
        names.append(vocab.decode(ids))
        calls += c
    return Timed(names, time.perf_counter() - t, calls)


def time_self_speculative(model, vocab, n: int, seed: int, greedy: bool = False) -> Timed:
    heads, block = minigpt_heads(model), model.config.block_size
    gen = None if greedy else torch.Generator().manual_seed(seed)
    names, total, t = [], SpeculativeStats(), time.perf_counter()
    for _ in range(n):
        ids, _, stats = self_speculative_sample(heads, block, gen)
        names.append(vocab.decode(ids))
        total.add(stats)
    return Timed(names, time.perf_counter() - t, total.target_calls, total)


def time_draft_model(model, draft, vocab, n: int, seed: int, k: int = 1) -> Timed:
    """Last round's way: a separate draft model (``speculative.speculative_sample``), timed alike."""
    from minigpt.teaching.speculative import speculative_sample

    gen = torch.Generator().manual_seed(seed)
    names, total, t = [], SpeculativeStats(), time.perf_counter()
    for _ in range(n):
        ids, _, stats = speculative_sample(model, draft, k, gen)
        names.append(vocab.decode(ids))
        total.add(stats)
    return Timed(names, time.perf_counter() - t, total.target_calls, total)


def head_cost_ratio(model) -> float:
    """The second head's multiply-adds per position over the rest of the forward pass's (its linear
    layers; attention's scores over at most 16 places are left out): the draft's cost c in target
    steps, counted rather than timed."""
    from torch import nn

    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    head = model.mtp_head.weight.numel()
    return head / (sum(m.weight.numel() for m in linears) - head)


@torch.no_grad()
def second_head_rank_hits(model, names: list[list[int]], ranks: int = 3) -> list[float]:
    """How often the character after next is the second head's best, second, … guess, over every
    place of ``names`` (each the ids of one name's characters)."""
    heads, block, hits, total = minigpt_heads(model), model.config.block_size, [0] * ranks, 0
    for chars in names:
        ids = [0, *chars, 0]
        _, second = heads(ids[:block])
        order = second.argsort(dim=-1, descending=True)
        for t in range(min(len(ids) - 2, block)):
            rank = int((order[t] == ids[t + 2]).nonzero())
            total += 1
            if rank < ranks:
                hits[rank] += 1
    return [h / total for h in hits]


def _row(timed: Timed) -> dict:
    out = {"seconds": timed.seconds, "target_calls": timed.target_calls,
           "mean_length": sum(map(len, timed.names)) / len(timed.names)}
    if timed.stats is not None:
        s = timed.stats
        out.update(drafted=s.drafted, accepted=s.accepted, tokens=s.tokens, draft_calls=s.draft_calls)
    return out


def compare(model, vocab, draft, n: int = 200, repeats: int = 3, seed: int = 0) -> dict:
    """Plain sampling, self-speculation and the separate draft model (γ = 1) on the same ``n`` names'
    seed, each timed ``repeats`` times in turn (the fastest kept: the least disturbed by other
    work), plus greedy decoding both ways (their names must agree)."""
    from minigpt.training.cpu_policy import one_thread

    ways = {"plain": lambda: time_plain(model, vocab, n, seed),
            "self": lambda: time_self_speculative(model, vocab, n, seed),
            "mlp": lambda: time_draft_model(model, draft, vocab, n, seed)}
    best: dict[str, Timed] = {}
    with one_thread():
        time_plain(model, vocab, 5, seed)  # warm up: the first calls pay for allocations
        time_self_speculative(model, vocab, 5, seed)
        for _ in range(repeats):
            for name, way in ways.items():
                timed = way()
                if name not in best or timed.seconds < best[name].seconds:
                    best[name] = timed
        greedy_plain = time_plain(model, vocab, 1, seed, greedy=True).names
        greedy_self = time_self_speculative(model, vocab, 1, seed, greedy=True).names
    return {"names": n, "repeats": repeats, "seed": seed, "head_cost": head_cost_ratio(model),
            **{name: _row(t) for name, t in best.items()},
            "greedy": {"plain": greedy_plain[0], "self": greedy_self[0]}}
