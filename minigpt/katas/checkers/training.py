"""Checkers for the training and decoding katas: sampling filter, BPE merge and encode, lr schedule,
AdamW, parameter count, Muon's Newton–Schulz step."""

from __future__ import annotations

import math

import torch

from minigpt.katas.checkers.base import Case, Checker, Mistake, generator, randn

F64, F32 = torch.float64, torch.float32


# ---------------------------------------------------------------------------- sampling


def _sampling_cases() -> list[Case]:
    g = generator(110)
    peaked = torch.tensor([[4.0, 1.0, 0.5, 0.0, -1.0]], dtype=F64)
    return [
        Case("logits 2×6, temperature 1, nothing filtered", (randn(g, 2, 6, scale=2),)),
        Case("temperature 0.5", (randn(g, 3, 5, scale=2), 0.5)),
        Case("top_k=2", (randn(g, 2, 6, scale=2),), {"top_k": 2}),
        Case("top_p=0.7", (randn(g, 2, 8, scale=2),), {"top_p": 0.7}),
        Case("temperature 2, top_k=4 and top_p=0.8 together, float32", (randn(g, 2, 3, 7, dtype=F32, scale=2), 2.0),
             {"top_k": 4, "top_p": 0.8}),
        Case("top_p=0.5 where the most likely token alone passes 0.5: a one-hot row", (peaked,), {"top_p": 0.5}),
        Case("top_k=1 keeps the argmax", (randn(g, 3, 4),), {"top_k": 1}),
        Case("top_k larger than the vocabulary keeps everything", (randn(g, 1, 3),), {"top_k": 10}),
    ]


def _filter(logits, temperature=1.0, top_k=None, top_p=None, *, temp_after=False, keep_crossing=True, order="k-then-p"):
    z = logits if temp_after else logits / temperature

    def k_filter(z):
        if top_k is None or top_k >= z.shape[-1]:
            return z
        kth = torch.topk(z, top_k, dim=-1).values[..., -1:]
        return z.masked_fill(z < kth, float("-inf"))

    def p_filter(p):
        if top_p is None:
            return p
        srt, idx = p.sort(dim=-1, descending=True)
        cum = srt.cumsum(dim=-1)
        drop = (cum - srt >= top_p) if keep_crossing else (cum > top_p)
        p = p.masked_fill(torch.zeros_like(drop).scatter(-1, idx, drop), 0.0)
        return p / p.sum(dim=-1, keepdim=True)

    if order == "p-then-k":
        p = p_filter(torch.softmax(z, dim=-1))
        p = torch.softmax(k_filter(p.log()), dim=-1)
    else:
        p = p_filter(torch.softmax(k_filter(z), dim=-1))
    if temp_after:
        p = p ** (1 / temperature)
        p = p / p.sum(dim=-1, keepdim=True)
    return p


SAMPLING_FILTER = Checker(_sampling_cases, (
    Mistake("top-p dropped the token that crosses p: keep a token when the mass BEFORE it is below p",
            lambda *a, **k: _filter(*a, **k, keep_crossing=False)),
    Mistake("the temperature was applied after top-k/top-p: apply it first, since it changes which "
            "tokens top-p keeps",
            lambda *a, **k: _filter(*a, **k, temp_after=True) if (a[1:] or [1.0])[0] != 1.0 else None),
    Mistake("top-p ran before top-k: top-k first, then top-p on what is left",
            lambda *a, **k: _filter(*a, **k, order="p-then-k")),
    Mistake("the temperature was ignored", lambda logits, temperature=1.0, **k: _filter(logits, 1.0, **k)),
))


# ---------------------------------------------------------------------------- BPE


def _bpe_cases() -> list[Case]:
    g = generator(120)
    longer = torch.randint(0, 4, (40,), generator=g).tolist()
    return [
        Case("ids [1, 2, 3, 1, 2], new id 9", ([1, 2, 3, 1, 2], 9)),
        Case("a run of equal ids [7, 7, 7, 7, 7]: no overlapping merges", ([7, 7, 7, 7, 7], 8)),
        Case("a tie: (5, 6) and (6, 5) both twice; the first seen wins", ([5, 6, 5, 6, 5], 10)),
        Case("40 random ids in 0..3, new id 4", (longer, 4)),
        Case("a single id: no pair", ([3], 4)),
        Case("no ids at all", ([], 0)),
    ]


def _bpe(ids, new_id, *, overlap=False, first_only=False, tie="first"):
    if len(ids) < 2:
        return None, list(ids)
    counts: dict = {}
    for p in zip(ids, ids[1:]):
        counts[p] = counts.get(p, 0) + 1
    best = max(counts, key=counts.get) if tie == "first" else max(counts, key=lambda p: (counts[p], p))
    out, i, done = [], 0, False
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == best and not done:
            out.append(new_id)
            i += 1 if overlap else 2
            done = first_only
        else:
            out.append(ids[i])
            i += 1
    return best, out


BPE_MERGE = Checker(_bpe_cases, (
    Mistake("merges overlapped: after a merge, skip both ids of the pair", lambda *a: _bpe(*a, overlap=True)),
    Mistake("only the first occurrence was merged: replace every occurrence", lambda *a: _bpe(*a, first_only=True)),
    Mistake("a tie went to the largest pair, not the one seen first", lambda *a: _bpe(*a, tie="largest")),
))


# ---------------------------------------------------------------------------- lr schedule


def _lr_cases() -> list[Case]:
    base = (3e-4, 3e-5, 10, 100)
    return [Case(f"step {s} of 100, warmup 10, max 3e-4, min 3e-5", (s,) + base) for s in (0, 5, 9, 10, 40, 99, 100, 150)] + [
        Case("warmup 0: step 0 is max_lr", (0, 1e-3, 0.0, 0, 50)),
        Case("warmup 0, step 25 of 50", (25, 1e-3, 0.0, 0, 50)),
    ]


def _lr(step, max_lr, min_lr, warmup, total, *, plus_one=True, over_total=False, floor=True):
    if step < warmup:
        return max_lr * ((step + 1) if plus_one else step) / warmup
    if step >= total:
        return min_lr
    p = step / total if over_total else (step - warmup) / (total - warmup)
    low = min_lr if floor else 0.0
    return low + 0.5 * (max_lr - low) * (1 + math.cos(math.pi * p))


LR_SCHEDULE = Checker(_lr_cases, (
    Mistake("the warmup started at 0: step 0 should already be max_lr · 1/warmup", lambda *a: _lr(*a, plus_one=False)),
    Mistake("the cosine ran over all the steps: its progress is (step - warmup) / (total - warmup)",
            lambda *a: _lr(*a, over_total=True)),
    Mistake("the cosine went down to 0 instead of min_lr", lambda *a: _lr(*a, floor=False)),
))


# ---------------------------------------------------------------------------- AdamW


def _adamw_cases() -> list[Case]:
    g = generator(130)

    def state(*shape, dtype=F64, fresh=False):
        p, grad = randn(g, *shape, dtype=dtype), randn(g, *shape, dtype=dtype)
        m = torch.zeros(shape, dtype=dtype) if fresh else randn(g, *shape, dtype=dtype, scale=0.1)
        v = torch.zeros(shape, dtype=dtype) if fresh else randn(g, *shape, dtype=dtype, scale=0.1).abs()
        return p, grad, m, v

    return [
        Case("the first step (zero moments), 3×4 weights", state(3, 4, fresh=True) + (1,)),
        Case("step 5 with moments, lr 0.01, weight decay 0.1", state(5, dtype=F64) + (5,), {"lr": 0.01, "weight_decay": 0.1}),
        Case("step 1000, float32", state(2, 3, dtype=F32) + (1000,)),
        Case("weight_decay 0: plain Adam", state(4) + (3,), {"weight_decay": 0.0}),
        Case("a zero gradient still decays the weights", (randn(g, 3), torch.zeros(3, dtype=F64), torch.zeros(3, dtype=F64),
                                                           torch.zeros(3, dtype=F64), 2), {"lr": 0.1, "weight_decay": 0.5}),
    ]


def _adamw(p, g, m, v, step, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.01, *,
           correct=True, l2=False, eps_inside=False):
    if l2:
        g = g + weight_decay * p
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    mh, vh = (m / (1 - beta1 ** step), v / (1 - beta2 ** step)) if correct else (m, v)
    denom = (vh + eps).sqrt() if eps_inside else vh.sqrt() + eps
    base = p if l2 else p * (1 - lr * weight_decay)
    return base - lr * mh / denom, m, v


ADAMW_STEP = Checker(_adamw_cases, (
    Mistake("no bias correction: divide m by (1 - β1^step) and v by (1 - β2^step)", lambda *a, **k: _adamw(*a, **k, correct=False)),
    Mistake("weight decay was added to the gradient (Adam with L2); AdamW shrinks the weights apart from it",
            lambda *a, **k: _adamw(*a, **k, l2=True)),
    Mistake("eps went inside the square root: lr · m̂ / (√v̂ + eps)", lambda *a, **k: _adamw(*a, **k, eps_inside=True)),
), rtol=1e-6, atol=1e-9)


# ---------------------------------------------------------------------------- parameter count


def _params_cases() -> list[Case]:
    return [
        Case("V=27, T=16, 2 layers, d=64, tied", (27, 16, 2, 64)),
        Case("GPT-2 small: V=50257, T=1024, 12 layers, d=768, tied", (50257, 1024, 12, 768)),
        Case("V=65, T=256, 6 layers, d=384, untied head", (65, 256, 6, 384), {"tied": False}),
        Case("no layers: embeddings, final LayerNorm, head", (10, 8, 0, 4)),
    ]


def _params(V, T, L, d, tied=True, *, pos=True, norms=True, biases=True, head_twice=False, mlp=4):
    n = V * d + (T * d if pos else 0)
    block = 4 * d * d + 2 * mlp * d * d
    if biases:
        block += 4 * d + mlp * d + d
    if norms:
        block += 4 * d
    n += L * block + (2 * d if norms else 0)
    if not tied or head_twice:
        n += d * V
    return n


GPT_PARAMS = Checker(_params_cases, (
    Mistake("the position embedding (T·d) was not counted", lambda *a, **k: _params(*a, **k, pos=False)),
    Mistake("the LayerNorms (a scale and a shift of d each, two per block and a final one) were not counted",
            lambda *a, **k: _params(*a, **k, norms=False)),
    Mistake("the biases were not counted", lambda *a, **k: _params(*a, **k, biases=False)),
    Mistake("the tied output head was counted again: it shares the token embedding's V·d weights",
            lambda *a, **k: _params(*a, **k, head_twice=True)),
    Mistake("the MLP was counted as d → d → d: its hidden layer is 4d wide", lambda *a, **k: _params(*a, **k, mlp=1)),
))


# ---------------------------------------------------------------------------- BPE encode

_BPE_TEXT = "the cat sat on the mat; the hat, the bat and that cat sat there. " * 3


def _bpe_encode_cases() -> list[Case]:
    from minigpt.teaching.bpe import train_bpe

    learned = [(m.left, m.right) for m in train_bpe(_BPE_TEXT, 40).merges]
    doubling = [("a", "a"), ("aa", "aa"), ("b", "a")]
    return [
        Case("' that' with the merges learned on a short text", (" that", learned)),
        Case("' hatter': some characters stay single", (" hatter", learned)),
        Case("' ate': (a, t) was learned before (' ', a), so it wins though it is not leftmost", (" ate", learned)),
        Case("' there' takes five merges in a row", (" there", learned)),
        Case("'aaaaa' with (a, a) then (aa, aa): no overlapping merges", ("aaaaa", doubling)),
        Case("'baaab': the lower rank wins over the leftmost pair", ("baaab", doubling)),
        Case("a merge listed twice counts at its first position", ("abc", [("b", "c"), ("a", "b"), ("b", "c")])),
        Case("a word no merge applies to", ("xyz", learned)),
        Case("a single character", ("q", learned)),
        Case("the empty word", ("", learned)),
    ]


def _encode(word, merges, *, choose="rank", overlap=False):
    rank: dict = {}
    for i, pair in enumerate(merges):
        rank.setdefault(tuple(pair), i)
    tokens = list(word)
    while len(tokens) > 1:
        pairs = [p for p in zip(tokens, tokens[1:]) if p in rank]
        if not pairs:
            break
        best = {"rank": min(pairs, key=rank.get), "leftmost": pairs[0],
                "latest": max(pairs, key=rank.get), "frequent": max(pairs, key=pairs.count)}[choose]
        out, i = [], 0
        while i < len(tokens):
            if i + 1 < len(tokens) and (tokens[i], tokens[i + 1]) == best:
                out.append(tokens[i] + tokens[i + 1])
                i += 1 if overlap else 2
            else:
                out.append(tokens[i])
                i += 1
        tokens = out
    return tokens


BPE_ENCODE = Checker(_bpe_encode_cases, (
    Mistake("the leftmost mergeable pair was merged first: merge the pair learned earliest (lowest rank)",
            lambda *a: _encode(*a, choose="leftmost")),
    Mistake("the pair learned last was merged first: rank order means the earliest merge first",
            lambda *a: _encode(*a, choose="latest")),
    Mistake("the most frequent pair in the word was merged first (that is training, not encoding): "
            "merge by rank", lambda *a: _encode(*a, choose="frequent")),
    Mistake("merges overlapped: after a merge, skip both tokens of the pair", lambda *a: _encode(*a, overlap=True)),
))


# ---------------------------------------------------------------------------- Newton–Schulz


def _ns_cases() -> list[Case]:
    g = generator(210)
    return [
        Case("a 4×4 matrix, 5 steps", (randn(g, 4, 4),)),
        Case("a wide 3×6 matrix", (randn(g, 3, 6),)),
        Case("a tall 7×3 matrix (the iteration may run on its transpose)", (randn(g, 7, 3),)),
        Case("a stack of two 4×5 matrices, float32", (randn(g, 2, 4, 5, dtype=F32),)),
        Case("a gradient of large norm (×1000)", (randn(g, 5, 5, scale=1000.0),)),
        Case("2 steps only", (randn(g, 3, 4),), {"steps": 2}),
    ]


def _ns(g, steps=5, *, normalise=True, coefficients=None, cubic=False, run=None):
    from minigpt.training.muon import NS_COEFFICIENTS

    a, b, c = coefficients or NS_COEFFICIENTS
    x = g / (g.norm(dim=(-2, -1), keepdim=True) + 1e-7) if normalise else g
    for _ in range(steps if run is None else run):
        gram = x @ x.transpose(-2, -1)
        x = 1.5 * x - 0.5 * gram @ x if cubic else a * x + (b * gram + c * gram @ gram) @ x
    return x


NEWTON_SCHULZ = Checker(_ns_cases, (
    Mistake("g was not divided by its Frobenius norm first: singular values above 1 make the iteration blow up",
            lambda *a, **k: _ns(*a, **k, normalise=False)),
    Mistake("the coefficients were swapped: a = 3.4445 multiplies X, c = 2.0315 the quintic term",
            lambda *a, **k: _ns(*a, **k, coefficients=(2.0315, -4.7750, 3.4445))),
    Mistake("this is the textbook cubic 1.5·X − 0.5·(X·Xᵀ)·X; Muon uses the tuned quintic",
            lambda *a, **k: _ns(*a, **k, cubic=True)),
    Mistake("only one step ran: repeat the update `steps` times", lambda *a, **k: _ns(*a, **k, run=1)),
), rtol=1e-4, atol=1e-5)  # float32 inside is accepted: Muon itself runs the iteration in low precision


CHECKERS = {
    "sampling_filter": SAMPLING_FILTER, "bpe_merge": BPE_MERGE, "lr_schedule": LR_SCHEDULE,
    "adamw_step": ADAMW_STEP, "gpt_params": GPT_PARAMS, "bpe_encode": BPE_ENCODE, "newton_schulz": NEWTON_SCHULZ,
}
