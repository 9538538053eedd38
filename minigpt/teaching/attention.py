"""Self-attention written out step by step, for teaching.

Everything here works on small float64 tensors and returns *every* intermediate, so that the
lessons, the attention stepper and the tests can show and check each number. The fast path used
for training is ``F.scaled_dot_product_attention`` in ``minigpt.models.gpt``; a test checks that the
two agree.

Shapes: X is (T, d), W_Q/W_K/W_V are (d, d_k) or (d, d) for multi-head, W_O is (d, d).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

Tensor = torch.Tensor

# Deliberate mistakes the stepper can switch on to show what each one breaks.
BUGS = {
    "mask_after_softmax": "apply the causal mask after the softmax",
    "mask_with_zero": "fill masked scores with 0 instead of −∞",
    "no_scaling": "skip the division by √d_k",
    "softmax_wrong_axis": "take the softmax down columns instead of along rows",
    "k_not_transposed": "multiply Q by K instead of Kᵀ",
}


def _t(x) -> Tensor:
    return torch.as_tensor(x, dtype=torch.float64)


def softmax(x, dim: int = -1) -> Tensor:
    """Numerically stable softmax: subtracting the max changes nothing mathematically."""
    x = _t(x)
    shifted = x - x.amax(dim=dim, keepdim=True).clamp(min=-1e300)
    e = torch.exp(shifted)
    return e / e.sum(dim=dim, keepdim=True)


def causal_mask(T: int) -> Tensor:
    """Lower-triangular (T, T) boolean matrix: True where position i may look at position j."""
    return torch.tril(torch.ones(T, T, dtype=torch.bool))


@dataclass
class AttentionTrace:
    """All intermediates of one scaled dot-product attention head."""

    X: Tensor
    W_q: Tensor
    W_k: Tensor
    W_v: Tensor
    Q: Tensor
    K: Tensor
    V: Tensor
    scores: Tensor  # Q Kᵀ
    scale: float  # √d_k (1.0 when scaling is off)
    scaled: Tensor  # scores / scale
    mask: Tensor | None  # boolean allowed-matrix, None when not causal
    masked: Tensor  # scaled scores with −∞ (or the bug's value) where not allowed
    weights: Tensor  # softmax(masked) row-wise
    output: Tensor  # weights @ V
    causal: bool
    bugs: frozenset[str] = field(default_factory=frozenset)
    error: str | None = None  # set when a bug makes a stage impossible (shape mismatch)


def self_attention(
    X,
    W_q,
    W_k,
    W_v,
    *,
    causal: bool = False,
    scale: bool = True,
    bugs: frozenset[str] | set[str] | tuple = (),
) -> AttentionTrace:
    """One attention head, every stage kept: Q=XW_Q, K=XW_K, V=XW_V, softmax(QKᵀ/√d_k)V."""
    X, W_q, W_k, W_v = _t(X), _t(W_q), _t(W_k), _t(W_v)
    return attention_from_qkv(
        X @ W_q, X @ W_k, X @ W_v, X=X, W_q=W_q, W_k=W_k, W_v=W_v,
        causal=causal, scale=scale, bugs=bugs,
    )


def attention_from_qkv(
    Q, K, V, *, X=None, W_q=None, W_k=None, W_v=None, causal: bool = False,
    scale: bool = True, bugs=(),
) -> AttentionTrace:
    """The stages after the projections: scores, scaling, mask, softmax, weighted sum."""
    bugs = frozenset(bugs)
    unknown = bugs - BUGS.keys()
    if unknown:
        raise ValueError(f"unknown bug toggles: {sorted(unknown)}")
    Q, K, V = _t(Q), _t(K), _t(V)
    T, d_k = Q.shape
    error = None
    if "k_not_transposed" in bugs:
        if K.shape[0] != d_k:
            error = f"Q is {T}×{d_k}, K is {K.shape[0]}×{K.shape[1]}: Q·K needs {d_k} = {K.shape[0]}"
            scores = torch.full((T, K.shape[0]), float("nan"), dtype=torch.float64)
        else:
            # Q (T×d_k) times K (T×d_k) only types when T = d_k, and then it mixes
            # dimensions with positions: numbers come out, but they mean nothing.
            scores = Q @ K
    else:
        scores = Q @ K.T
    use_scale = scale and "no_scaling" not in bugs
    s = math.sqrt(d_k) if use_scale else 1.0
    scaled = scores / s
    mask = causal_mask(T)[:, : scores.shape[1]] if causal else None
    fill = 0.0 if "mask_with_zero" in bugs else float("-inf")
    if mask is not None and "mask_after_softmax" not in bugs:
        masked = scaled.masked_fill(~mask, fill)
    else:
        masked = scaled.clone()
    weights = softmax(masked, dim=0 if "softmax_wrong_axis" in bugs else -1)
    if mask is not None and "mask_after_softmax" in bugs:
        weights = weights.masked_fill(~mask, 0.0)  # zeroed afterwards: rows no longer sum to 1
    output = weights @ V
    eye = torch.eye(d_k, dtype=torch.float64)
    return AttentionTrace(
        X=Q if X is None else X, W_q=eye if W_q is None else W_q,
        W_k=eye if W_k is None else W_k, W_v=eye if W_v is None else W_v,
        Q=Q, K=K, V=V, scores=scores, scale=s, scaled=scaled, mask=mask, masked=masked,
        weights=weights, output=output, causal=causal, bugs=bugs, error=error,
    )


@dataclass
class MultiHeadTrace:
    """Multi-head attention: one projection per Q/K/V, split into heads by a reshape."""

    X: Tensor
    Q: Tensor  # (T, d) before the split
    K: Tensor
    V: Tensor
    n_heads: int
    heads: list[AttentionTrace]  # per-head traces on (T, d_head) column slices
    concat: Tensor  # (T, d) heads' outputs side by side
    W_o: Tensor
    output: Tensor  # concat @ W_o


def split_heads(M, n_heads: int) -> Tensor:
    """(T, d) -> (n_heads, T, d_head): a reshape then a transpose, no new numbers."""
    M = _t(M)
    T, d = M.shape
    if n_heads < 1 or d % n_heads:
        raise ValueError(f"d={d} is not divisible by n_heads={n_heads}")
    return M.reshape(T, n_heads, d // n_heads).transpose(0, 1)


def multi_head_attention(
    X, W_q, W_k, W_v, W_o, n_heads: int, *, causal: bool = True, scale: bool = True, bugs=()
) -> MultiHeadTrace:
    """Project once, split the columns into heads, attend per head, concatenate, mix with W_O."""
    X, W_q, W_k, W_v, W_o = _t(X), _t(W_q), _t(W_k), _t(W_v), _t(W_o)
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    Qh, Kh, Vh = split_heads(Q, n_heads), split_heads(K, n_heads), split_heads(V, n_heads)
    dh = Q.shape[1] // n_heads
    heads = []
    for h in range(n_heads):
        cols = slice(h * dh, (h + 1) * dh)
        heads.append(attention_from_qkv(
            Qh[h], Kh[h], Vh[h], X=X, W_q=W_q[:, cols], W_k=W_k[:, cols], W_v=W_v[:, cols],
            causal=causal, scale=scale, bugs=bugs,
        ))
    concat = torch.cat([h.output for h in heads], dim=1)
    return MultiHeadTrace(
        X=X, Q=Q, K=K, V=V, n_heads=n_heads, heads=heads, concat=concat, W_o=W_o,
        output=concat @ W_o,
    )


# ---------------------------------------------------------------------------------------------
# Checks the stepper shows as a green/red strip.


@dataclass
class Check:
    name: str
    status: str  # "ok", "fail", or "skipped" (an earlier stage already failed)
    detail: str

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def check_trace(tr: AttentionTrace, tol: float = 1e-9) -> list[Check]:
    """Invariants of correct attention, in stage order.

    Each is designed to catch one mistake: every bug in ``BUGS`` turns exactly one check red.
    A check after a failed one is reported as skipped, because the stage it inspects was computed
    from wrong inputs and a pass or fail there would mislead.
    """
    T = tr.Q.shape[0]
    w = tr.weights
    finite = bool(torch.isfinite(w).all())
    expected_scores = tr.Q @ tr.K.T
    tests: list[tuple[str, bool, str]] = [(
        "scores = Q·Kᵀ",
        tr.error is None and tr.scores.shape == (T, T)
        and bool(torch.allclose(tr.scores, expected_scores, atol=tol)),
        tr.error or f"({T}×{tr.Q.shape[1]})·({tr.K.shape[1]}×{T}) → {T}×{T}",
    )]
    allowed = causal_mask(T) if tr.causal else torch.ones(T, T, dtype=torch.bool)
    if tr.causal:
        tests.append((
            "masked weights are exactly 0",
            finite and bool((w[~allowed] == 0).all()),
            "w[i,j] = 0 for every j > i (softmax of −∞)",
        ))
    # Within each row, the allowed weights must be proportional to exp(score): that is what a
    # softmax along the row gives, and what a softmax down the columns does not.
    prop_ok = finite
    if finite:
        for i in range(T):
            a = allowed[i]
            row = w[i, a]
            if row.sum() <= 0:
                prop_ok = False
                break
            if not torch.allclose(row / row.sum(), softmax(tr.scaled[i, a]), atol=1e-7):
                prop_ok = False
                break
    tests.append(("softmax along each row", prop_ok, "w[i,j] ∝ exp(s[i,j]) over the keys row i may see"))
    rows = w.sum(dim=-1)
    tests.append((
        "rows sum to 1",
        finite and bool(torch.allclose(rows, torch.ones_like(rows), atol=tol)),
        "Σ_j w[i,j] = 1 for every row i",
    ))
    if tr.causal:
        tests.append(("row 0 attends only to itself", finite and abs(w[0, 0].item() - 1) < tol, "w[0,0] = 1"))
        tests.append((
            "output row 0 equals v₀",
            finite and bool(torch.allclose(tr.output[0], tr.V[0], atol=1e-9)),
            "out[0] = 1·v₀ when only token 0 is visible",
        ))
    d_k = tr.Q.shape[1]
    checks, failed = [], False
    for name, ok, detail in tests:
        status = "skipped" if failed else ("ok" if ok else "fail")
        failed = failed or not ok
        checks.append(Check(name, status, detail))
    # Scaling is independent of the other stages, so it is always evaluated.
    scaled_ok = abs(tr.scale - math.sqrt(d_k)) < 1e-12
    checks.append(Check("scores divided by √d_k", "ok" if scaled_ok else "fail",
                        f"√d_k = √{d_k} = {math.sqrt(d_k):.3f}"))
    return checks


# ---------------------------------------------------------------------------------------------
# Presets


@dataclass(frozen=True)
class Preset:
    name: str
    tokens: tuple[str, ...]
    X: tuple[tuple[float, ...], ...]
    W_q: tuple[tuple[float, ...], ...]
    W_k: tuple[tuple[float, ...], ...]
    W_v: tuple[tuple[float, ...], ...]
    W_o: tuple[tuple[float, ...], ...] | None = None
    n_heads: int = 1
    seed: int | None = None


def _m(*rows) -> tuple[tuple[float, ...], ...]:
    """A matrix literal as float rows, so ``torch.tensor(preset.X)`` is a float tensor."""
    return tuple(tuple(float(v) for v in row) for row in rows)


# The course's worked example: four tokens with 2-dimensional embeddings.
COURSE_EXAMPLE = Preset(
    name="the cat sat down",
    tokens=("the", "cat", "sat", "down"),
    X=_m((1, 0), (0, 1), (1, 1), (0.5, 0.5)),
    W_q=_m((1, 0), (0, 1)),
    W_k=_m((0, 1), (1, 0)),
    W_v=_m((1, 1), (0, 1)),
)

# A 5-token, d=4 sequence like the one in the course's interactive calculator; the numbers are our
# own small integers and halves so every product can be checked by hand.
FIVE_TOKEN_EXAMPLE = Preset(
    name="five tokens, d=4",
    tokens=("the", "cat", "sat", "on", "mats"),
    X=_m(
        (1, 0, 1, 0),
        (0, 2, 0, 1),
        (1, 1, 0, -1),
        (0, -1, 1, 1),
        (0.5, 0.5, 0.5, 0.5),
    ),
    W_q=_m((1, 0, 0, 1), (0, 1, 1, 0), (0.5, 0, 1, 0), (0, 0.5, 0, 1)),
    W_k=_m((0, 1, 0, 0.5), (1, 0, 0.5, 0), (0, 0, 1, 1), (1, 1, 0, 0)),
    W_v=_m((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1)),
    W_o=_m((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1)),
    n_heads=2,
)


def random_preset(seed: int, T: int = 5, d: int = 4, n_heads: int = 2) -> Preset:
    """A seeded random sequence (values rounded to one decimal so they stay readable)."""
    if not (1 <= T <= 8 and 1 <= d <= 8):
        raise ValueError(f"need 1 ≤ T ≤ 8 and 1 ≤ d ≤ 8, got T={T}, d={d}")
    if n_heads < 1 or d % n_heads:
        raise ValueError(f"n_heads={n_heads} must divide d={d}")
    g = torch.Generator().manual_seed(seed)

    def mat(r, c, s=1.0):
        m = (torch.randn(r, c, generator=g, dtype=torch.float64) * s).round(decimals=1)
        return tuple(tuple(float(v) for v in row) for row in m)

    return Preset(
        name=f"random (seed {seed})",
        tokens=tuple(f"t{i}" for i in range(T)),
        X=mat(T, d), W_q=mat(d, d, 0.7), W_k=mat(d, d, 0.7), W_v=mat(d, d, 0.7),
        W_o=mat(d, d, 0.7), n_heads=n_heads, seed=seed,
    )


def run_preset(p: Preset, *, causal: bool = False, scale: bool = True, bugs=()) -> AttentionTrace:
    return self_attention(p.X, p.W_q, p.W_k, p.W_v, causal=causal, scale=scale, bugs=bugs)


@dataclass
class ScalingDemo:
    d_k: int
    std_raw: float  # std of q·k over many random pairs (≈ √d_k)
    std_scaled: float  # std of q·k/√d_k (≈ 1)
    max_weight_raw: float  # mean over trials of the largest softmax weight of T random scores
    max_weight_scaled: float
    entropy_raw: float  # mean entropy (nats) of those softmax rows
    entropy_scaled: float


def scaling_demo(d_k: int, T: int = 8, trials: int = 2000, seed: int = 0) -> ScalingDemo:
    """Why √d_k: with unit-variance q, k the dot product has variance d_k, which saturates softmax."""
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(trials, 1, d_k, generator=g, dtype=torch.float64)
    k = torch.randn(trials, T, d_k, generator=g, dtype=torch.float64)
    raw = (q * k).sum(-1)  # (trials, T)
    scaled = raw / math.sqrt(d_k)

    def stats(s):
        w = softmax(s, dim=-1)
        ent = -(w * torch.log(w.clamp_min(1e-300))).sum(-1)
        return w.max(-1).values.mean().item(), ent.mean().item()

    mr, er = stats(raw)
    ms, es = stats(scaled)
    return ScalingDemo(d_k, raw.std().item(), scaled.std().item(), mr, ms, er, es)
