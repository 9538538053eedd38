"""Checkers for the inference katas: a grouped-query KV-cache step, nucleus sampling with a
temperature, and the causal-plus-padding mask of a padded batch.

Their tolerances accept a solution that computes inside in float32 and returns the input's dtype
(a learner casting with ``.float()`` is right); every named mistake is far outside them.
"""

from __future__ import annotations

import torch

from minigpt.katas.checkers.attention import _attend
from minigpt.katas.checkers.base import Case, Checker, Mistake, generator, randn

F64, F32 = torch.float64, torch.float32
FLOAT32_INSIDE = {"rtol": 1e-5, "atol": 1e-6}


# ---------------------------------------------------------------------------- GQA + KV cache


def _gqa_cases() -> list[Case]:
    g = generator(170)

    def case(b, h, groups, t, d, dtype=F64):
        q = randn(g, b, h, 1, d, dtype=dtype)
        kv = tuple(randn(g, b, groups, n, d, dtype=dtype) for n in (1, 1, t, t))
        return (q,) + kv

    return [
        Case("B=1, 4 query heads sharing 2 key/value heads, 3 cached tokens, d=4", case(1, 4, 2, 3, 4)),
        Case("B=2, 6 query heads, 3 groups, 5 cached tokens, d=8, float32", case(2, 6, 3, 5, 8, F32)),
        Case("8 query heads, 2 groups of 4, 2 cached tokens", case(1, 8, 2, 2, 4)),
        Case("one key/value head for all 4 query heads (multi-query), 4 cached tokens", case(2, 4, 1, 4, 2)),
        Case("as many groups as heads (plain multi-head attention)", case(1, 3, 3, 2, 4)),
        Case("an empty cache (T=0): each head's output is its group's v_new", case(1, 4, 2, 0, 4)),
    ]


def _gqa(q, k, v, ck, cv, *, pairing="block", append=True, scale=True, expand_cache=False):
    keys = torch.cat([ck, k], dim=-2)
    values = torch.cat([cv, v], dim=-2)
    seen_k, seen_v = (keys, values) if append else (ck, cv)
    per_group = q.shape[1] // keys.shape[1]
    if pairing == "block":
        k_heads, v_heads = seen_k.repeat_interleave(per_group, 1), seen_v.repeat_interleave(per_group, 1)
    else:  # head h paired with group h % G
        k_heads, v_heads = seen_k.repeat(1, per_group, 1, 1), seen_v.repeat(1, per_group, 1, 1)
    out = _attend(q, k_heads, v_heads, scale=scale)
    if expand_cache:
        return out, keys.repeat_interleave(per_group, 1), values.repeat_interleave(per_group, 1)
    return out, keys, values


GQA_KV_STEP = Checker(_gqa_cases, (
    Mistake("query head h read key/value head h % G (repeat tiles the groups); heads come in blocks: "
            "head h reads group h // (H/G) (repeat_interleave)", lambda *a: _gqa(*a, pairing="tiled")),
    Mistake("the new token's own key and value were not in the attention: append them to the cache before attending",
            lambda *a: _gqa(*a, append=False)),
    Mistake("the scores were not divided by √d_k", lambda *a: _gqa(*a, scale=False)),
    Mistake("the caches were returned with H heads: they keep G, which is the memory GQA saves",
            lambda *a: _gqa(*a, expand_cache=True)),
), **FLOAT32_INSIDE)


# ---------------------------------------------------------------------------- top-p with temperature


def _top_p_cases() -> list[Case]:
    g = generator(180)

    def case(*shape, dtype=F64, scale=2.0):
        logits = randn(g, *shape, dtype=dtype, scale=scale)
        u = torch.rand(*shape[:-1], generator=g, dtype=F64).to(dtype)
        return logits, u

    peaked = torch.tensor([[5.0, 1.0, 0.5, 0.0, -1.0], [0.0, 0.3, 6.0, -2.0, 1.0]], dtype=F64)
    rows, u = case(4, 8)
    flat, u_flat = case(3, 10, scale=1.0)
    batch, u_batch = case(2, 3, 6, dtype=F32)
    sharp, u_sharp = case(3, 8, scale=1.5)
    return [
        Case("4 rows of 8 logits, temperature 0.7, top_p 0.9", (rows, 0.7, 0.9, u)),
        Case("temperature 0.5 sharpens before the cut, top_p 0.8", (sharp, 0.5, 0.8, u_sharp)),
        Case("temperature 2 flattens before the cut, top_p 0.6", (flat, 2.0, 0.6, u_flat)),
        Case("a 2×3 batch of rows, float32, temperature 1.3, top_p 0.75", (batch, 1.3, 0.75, u_batch)),
        Case("top_p 0.3 where the most likely token alone passes it: one token kept",
             (peaked, 0.8, 0.3, torch.tensor([0.9, 0.2], dtype=F64))),
        Case("top_p 1.0 keeps every token, temperature 0.9", (sharp * 0.5, 0.9, 1.0, u_sharp.flip(0))),
    ]


def _top_p(logits, temperature, top_p, u, *, temp="first", keep_crossing=True, cut=True):
    z = logits * temperature if temp == "multiplied" else logits / temperature if temp == "first" else logits
    p = torch.softmax(z, dim=-1)
    if cut:
        srt, idx = p.sort(dim=-1, descending=True)
        before = srt.cumsum(dim=-1) - srt
        drop_sorted = before >= top_p if keep_crossing else srt.cumsum(dim=-1) > top_p
        p = p.masked_fill(torch.zeros_like(drop_sorted).scatter(-1, idx, drop_sorted), 0.0)
        p = p / p.sum(dim=-1, keepdim=True)
    if temp == "after":
        p = p ** (1 / temperature)
        p = p / p.sum(dim=-1, keepdim=True)
    token = (p.cumsum(dim=-1) <= u.unsqueeze(-1)).sum(dim=-1).clamp(max=p.shape[-1] - 1)
    return p, token


TOP_P_SAMPLE = Checker(_top_p_cases, (
    Mistake("the temperature was applied after top-p: it must come first, since it changes which tokens "
            "top-p keeps", lambda *a: _top_p(*a, temp="after")),
    Mistake("top-p dropped the token that crosses top_p: keep a token when the mass BEFORE it is below top_p",
            lambda *a: _top_p(*a, keep_crossing=False)),
    Mistake("the temperature was ignored", lambda *a: _top_p(*a, temp="ignored")),
    Mistake("the logits were multiplied by the temperature: divide them by it",
            lambda *a: _top_p(*a, temp="multiplied")),
    Mistake("top_p was ignored: the draw came from the whole distribution", lambda *a: _top_p(*a, cut=False)),
), **FLOAT32_INSIDE)


# ---------------------------------------------------------------------------- causal + padding mask


def _mask_cases() -> list[Case]:
    def ints(rows):
        return torch.tensor(rows, dtype=torch.int64)

    return [
        Case("right padding: lengths 4 and 2 in a batch of T=4", (ints([[1, 1, 1, 1], [1, 1, 0, 0]]),)),
        Case("left padding, T=5, as bools", (ints([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]]).bool(),)),
        Case("three rows, right and left padding mixed, T=4",
             (ints([[1, 1, 1, 0], [0, 1, 1, 1], [1, 0, 0, 0]]),)),
        Case("no padding at all: only the future is hidden", (torch.ones(2, 3, dtype=torch.int64),)),
        Case("T=1, one real token", (ints([[1]]),)),
    ]


def _mask(attention_mask, *, padding="keys", causal="tril", inverted=False, heads=True):
    real = attention_mask.bool()
    t = real.shape[-1]
    future_ok = {"tril": torch.ones(t, t, dtype=torch.bool).tril(), "triu": torch.ones(t, t, dtype=torch.bool).triu(),
                 "none": torch.ones(t, t, dtype=torch.bool)}[causal]
    pad = {"keys": real[:, None, :], "queries": real[:, :, None], "none": torch.ones_like(real)[:, None, :]}[padding]
    allowed = future_ok & pad
    allowed = ~allowed if inverted else allowed
    return allowed.unsqueeze(1) if heads else allowed


CAUSAL_PADDING_MASK = Checker(_mask_cases, (
    Mistake("padding was applied to the queries (rows) instead of the keys (columns): index it as "
            "attention_mask[:, None, :]", lambda m: _mask(m, padding="queries")),
    Mistake("the mask lets queries see the future and hides the past (triu where tril was meant)",
            lambda m: _mask(m, causal="triu")),
    Mistake("the padding was ignored: only the causal part is there", lambda m: _mask(m, padding="none")),
    Mistake("the causal part is missing: only padding is hidden", lambda m: _mask(m, causal="none")),
    Mistake("True marks what is hidden here; this kata asks True for what may be attended", lambda m: _mask(m, inverted=True)),
    Mistake("the head axis is missing: unsqueeze(1) to (B, 1, T, T)", lambda m: _mask(m, heads=False)),
))


CHECKERS = {"gqa_kv_step": GQA_KV_STEP, "top_p_sample": TOP_P_SAMPLE, "causal_padding_mask": CAUSAL_PADDING_MASK}
