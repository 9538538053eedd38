"""Checkers for the attention katas: softmax, attention, heads, multi-head attention, KV cache.

The mistakes are the stepper's bug catalogue (minigpt.teaching.attention.BUGS) written for
batched tensors, plus the ones interviews see most (.T on a batch, no max shift, the wrong dim).
"""

from __future__ import annotations

import math

import torch

from minigpt.katas.checkers.base import Case, Checker, Mistake, generator, randn, shape_text

F64, F32 = torch.float64, torch.float32


# ---------------------------------------------------------------------------- softmax


def _softmax_cases() -> list[Case]:
    g = generator(10)
    inf = float("-inf")
    partly = randn(g, 3, 5)
    partly[0, 1] = partly[2, 4] = inf
    return [
        Case("a 4×6 matrix of random logits, along the last axis", (randn(g, 4, 6),)),
        Case("a 2×3×5 batch, float32", (randn(g, 2, 3, 5, dtype=F32),)),
        Case("along dim=0 of a 5×3 matrix", (randn(g, 5, 3),), {"dim": 0}),
        Case("along dim=1 of a 2×4×3 batch", (randn(g, 2, 4, 3),), {"dim": 1}),
        Case("large logits around +1000 (overflow without the max shift)", (randn(g, 2, 5) + 1000,)),
        Case("large logits around -1000, float32", (randn(g, 3, 4, dtype=F32) - 1000,)),
        Case("a row with some -inf entries: they get weight 0", (partly,)),
        Case("a row that is -inf everywhere: NaN, as torch.softmax", (torch.full((2, 3), inf, dtype=F64),)),
        Case("a single logit", (torch.tensor([[3.5]], dtype=F64),)),
    ]


def _softmax_no_shift(x, dim=-1):
    e = x.exp()
    return e / e.sum(dim=dim, keepdim=True)


def _softmax_last_dim(x, dim=-1):
    return torch.softmax(x, dim=-1)


def _softmax_dim0(x, dim=-1):
    return torch.softmax(x, dim=0)


def _softmax_whole(x, dim=-1):
    e = (x - x.max()).exp()
    return e / e.sum()


SOFTMAX = Checker(_softmax_cases, (
    Mistake("exp overflowed: subtract each row's maximum before exp (the max shift)", _softmax_no_shift),
    Mistake("the softmax ran over the last axis whatever dim was asked", _softmax_last_dim),
    Mistake("the softmax ran over dim 0 instead of dim", _softmax_dim0),
    Mistake("the sum ran over the whole tensor instead of along dim (keepdim=True)", _softmax_whole),
))


# ---------------------------------------------------------------------------- attention


def _qkv(g, *shape, dtype=F64):
    return randn(g, *shape, dtype=dtype), randn(g, *shape, dtype=dtype), randn(g, *shape, dtype=dtype)


def _attention_cases() -> list[Case]:
    g = generator(20)
    return [
        Case("q, k, v of 3×4 (T=3, d=4), no mask", _qkv(g, 3, 4)),
        Case("q, k, v of 4×8, causal", _qkv(g, 4, 8), {"causal": True}),
        Case("a batch of 2, T=5, d=3, causal, float32", _qkv(g, 2, 5, 3, dtype=F32), {"causal": True}),
        Case("B=2, H=3, T=4, d=6 (four axes), no mask", _qkv(g, 2, 3, 4, 6)),
        Case("a batch of 1, T=6, d=2, causal", _qkv(g, 1, 6, 2), {"causal": True}),
        Case("T=1, causal: one token attends to itself", _qkv(g, 1, 1, 5), {"causal": True}),
        Case("large scores (q and k ×30), causal", tuple(t * s for t, s in zip(_qkv(g, 2, 4, 8), (30, 30, 1))),
             {"causal": True}),
    ]


def _scores(q, k, scale=True):
    s = q @ k.transpose(-2, -1)
    return s / math.sqrt(q.shape[-1]) if scale else s


def _future(s):
    return torch.ones(s.shape[-2], s.shape[-1], dtype=torch.bool).triu(1)


def _attend(q, k, v, causal=False, *, scale=True, mask="before", divide_by=None, axis=-1, fill=float("-inf")):
    s = q @ k.transpose(-2, -1)
    s = s / divide_by(q.shape[-1]) if divide_by else (s / math.sqrt(q.shape[-1]) if scale else s)
    if causal and mask == "before":
        s = s.masked_fill(_future(s), fill)
    w = torch.softmax(s, dim=axis)
    if causal and mask == "after":
        w = w.masked_fill(_future(s), 0.0)
    if causal and mask == "wrong-side":
        w = torch.softmax(s.masked_fill(_future(s).transpose(-2, -1), float("-inf")), dim=axis)
    return w @ v


def _attention_dot_t(q, k, v, causal=False):
    s = q @ k.T / math.sqrt(q.shape[-1])  # .T reverses every axis: right only for a 2-D k
    if causal:
        s = s.masked_fill(_future(s), float("-inf"))
    return torch.softmax(s, dim=-1) @ v


ATTENTION_MISTAKES = (
    Mistake("the scores were not divided by √d_k", lambda q, k, v, causal=False: _attend(q, k, v, causal, scale=False)),
    Mistake("the scores were divided by d_k instead of √d_k",
            lambda q, k, v, causal=False: _attend(q, k, v, causal, divide_by=float)),
    Mistake("the mask was applied after the softmax (the rows no longer sum to 1)",
            lambda q, k, v, causal=False: _attend(q, k, v, causal, mask="after")),
    Mistake("masked scores were set to 0 instead of -inf (exp(0) = 1 still gives them weight)",
            lambda q, k, v, causal=False: _attend(q, k, v, causal, fill=0.0)),
    Mistake("the mask hides the past instead of the future (tril where triu(1) was meant)",
            lambda q, k, v, causal=False: _attend(q, k, v, causal, mask="wrong-side")),
    Mistake("the softmax ran down the columns (dim=-2) instead of along each row over the keys",
            lambda q, k, v, causal=False: _attend(q, k, v, causal, axis=-2)),
    Mistake("the causal flag was ignored", lambda q, k, v, causal=False: _attend(q, k, v, False)),
    Mistake("k.T transposes every axis: use k.transpose(-2, -1), which works for batches and non-square shapes",
            _attention_dot_t),
)

ATTENTION = Checker(_attention_cases, ATTENTION_MISTAKES)


# ---------------------------------------------------------------------------- heads


def _split_cases() -> list[Case]:
    g = generator(30)
    return [
        Case("x of 2×3×8 into 2 heads", (randn(g, 2, 3, 8), 2)),
        Case("x of 1×5×6 into 3 heads, float32", (randn(g, 1, 5, 6, dtype=F32), 3)),
        Case("one head", (randn(g, 2, 4, 4), 1)),
        Case("as many heads as numbers (each head one wide)", (randn(g, 2, 3, 4), 4)),
        Case("T=1", (randn(g, 3, 1, 6), 2)),
    ]


SPLIT_HEADS = Checker(_split_cases, (
    Mistake("viewed as (B, n_head, T, d/n_head) straight away: each head got numbers of other tokens; "
            "view as (B, T, n_head, d/n_head), then transpose(1, 2)",
            lambda x, h: x.reshape(x.shape[0], h, x.shape[1], x.shape[2] // h)),
    Mistake("the heads were not moved in front of the time axis: transpose(1, 2) is missing",
            lambda x, h: x.reshape(x.shape[0], x.shape[1], h, x.shape[2] // h)),
    Mistake("each head took every n_head-th column instead of a contiguous block",
            lambda x, h: x.reshape(x.shape[0], x.shape[1], x.shape[2] // h, h).permute(0, 3, 1, 2)),
))


def _merge_cases() -> list[Case]:
    g = generator(40)
    return [
        Case("x of 2×2×3×4 (B=2, H=2, T=3, dh=4)", (randn(g, 2, 2, 3, 4),)),
        Case("x of 1×3×5×2, float32", (randn(g, 1, 3, 5, 2, dtype=F32),)),
        Case("one head", (randn(g, 2, 1, 4, 3),)),
        Case("dh=1", (randn(g, 2, 4, 3, 1),)),
    ]


MERGE_HEADS = Checker(_merge_cases, (
    Mistake("reshaped without moving the time axis back first: transpose(1, 2) before the reshape",
            lambda x: x.reshape(x.shape[0], x.shape[2], x.shape[1] * x.shape[3])),
    Mistake("the heads were interleaved number by number instead of placed one after the other",
            lambda x: x.permute(0, 2, 3, 1).reshape(x.shape[0], x.shape[2], -1)),
))


# ---------------------------------------------------------------------------- multi-head


def _mha_cases() -> list[Case]:
    g = generator(50)

    def case(b, t, d, h, dtype=F64):
        ws = tuple(randn(g, d, d, dtype=dtype, scale=d ** -0.5) for _ in range(4))
        return (randn(g, b, t, d, dtype=dtype),) + ws + (h,)

    return [
        Case("B=2, T=4, d=6, 2 heads", case(2, 4, 6, 2)),
        Case("B=1, T=5, d=8, 4 heads, float32", case(1, 5, 8, 4, F32)),
        Case("one head", case(2, 3, 4, 1)),
        Case("T=1", case(2, 1, 6, 3)),
        Case("B=3, T=6, d=12, 3 heads (d ≠ T)", case(3, 6, 12, 3)),
    ]


def _mha(x, w_q, w_k, w_v, w_o, n_head, *, scale_by=None, out=True, causal=True, head_split="ok"):
    b, t, d = x.shape
    dh = d // n_head

    def heads(z):
        if head_split == "view":
            return z.reshape(b, n_head, t, dh)
        return z.reshape(b, t, n_head, dh).transpose(1, 2)

    q, k, v = heads(x @ w_q), heads(x @ w_k), heads(x @ w_v)
    s = q @ k.transpose(-2, -1) / math.sqrt(scale_by if scale_by is not None else dh)
    if causal:
        s = s.masked_fill(_future(s), float("-inf"))
    y = (torch.softmax(s, dim=-1) @ v)
    y = y.reshape(b, t, d) if head_split == "view" else y.transpose(1, 2).reshape(b, t, d)
    return y @ w_o if out else y


MULTI_HEAD_ATTENTION = Checker(_mha_cases, (
    Mistake("the output projection W_O was left out", lambda *a: _mha(*a, out=False)),
    Mistake("the scores were divided by √d (the model width) instead of √(d/n_head), one head's width",
            lambda x, *a: _mha(x, *a, scale_by=x.shape[-1])),
    Mistake("the scores were not divided by √d_k", lambda *a: _mha(*a, scale_by=1)),
    Mistake("no causal mask: every token saw the future", lambda *a: _mha(*a, causal=False)),
    Mistake("the heads were cut with a plain view to (B, H, T, dh), mixing tokens across heads",
            lambda *a: _mha(*a, head_split="view")),
))


# ---------------------------------------------------------------------------- KV cache


def _kv_cases() -> list[Case]:
    g = generator(60)

    def case(b, h, t, d, dtype=F64):
        new = tuple(randn(g, b, h, 1, d, dtype=dtype) for _ in range(3))
        return new + (randn(g, b, h, t, d, dtype=dtype), randn(g, b, h, t, d, dtype=dtype))

    return [
        Case("B=1, H=2, 3 cached tokens, d=4", case(1, 2, 3, 4)),
        Case("B=2, H=1, 5 cached tokens, d=8, float32", case(2, 1, 5, 8, F32)),
        Case("an empty cache (T=0): the output is v_new", case(1, 2, 0, 4)),
        Case("B=2, H=3, 1 cached token, d=2", case(2, 3, 1, 2)),
    ]


def _kv(q, k, v, ck, cv, *, append=True, scale=True, dim=-2):
    keys = torch.cat([ck, k], dim=dim) if append else ck
    values = torch.cat([cv, v], dim=dim) if append else cv
    if dim != -2:
        return _attend(q, torch.cat([ck, k], -2), torch.cat([cv, v], -2), scale=scale), keys, values
    return _attend(q, keys, values, scale=scale), keys, values


KV_CACHE_STEP = Checker(_kv_cases, (
    Mistake("the new token's own key and value were not in the attention: append them to the cache before attending",
            lambda q, k, v, ck, cv: (_attend(q, ck, cv), torch.cat([ck, k], -2), torch.cat([cv, v], -2))),
    Mistake("the scores were not divided by √d_k", lambda *a: _kv(*a, scale=False)),
    Mistake("the caches grew along the wrong axis: time is dim=-2", lambda *a: _kv(*a, dim=-1)),
    Mistake("the caches were returned without the new token", lambda q, k, v, ck, cv: (_kv(q, k, v, ck, cv)[0], ck, cv)),
))


def _shape_note(x: torch.Tensor) -> str:
    return shape_text(x)


CHECKERS = {
    "softmax": SOFTMAX, "attention": ATTENTION, "split_heads": SPLIT_HEADS, "merge_heads": MERGE_HEADS,
    "multi_head_attention": MULTI_HEAD_ATTENTION, "kv_cache_step": KV_CACHE_STEP,
}
