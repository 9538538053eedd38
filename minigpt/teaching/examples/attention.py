"""Worked examples for attention: the course's four-token example, masks, heads, the √d scaling."""

from __future__ import annotations

import torch

from minigpt.teaching import attention
from minigpt.teaching.examples.registry import example, fmt, matrix, table

# The course's four-token example: "the cat sat down", d = 2.

_TOK = list(attention.COURSE_EXAMPLE.tokens)


def _course(scale: bool, causal: bool = False) -> attention.AttentionTrace:
    return attention.run_preset(attention.COURSE_EXAMPLE, scale=scale, causal=causal)


@example("attention.course.qkv", "Q, K and V for “the cat sat down”")
def _course_qkv() -> str:
    tr = _course(scale=False)
    p = attention.COURSE_EXAMPLE
    parts = [
        "Embeddings X and the three projections:",
        matrix(tr.X, _TOK, ["x₁", "x₂"], 1, "X"),
        matrix(torch.tensor(p.W_q), ["r1", "r2"], ["c1", "c2"], 0, "W_Q"),
        matrix(torch.tensor(p.W_k), ["r1", "r2"], ["c1", "c2"], 0, "W_K"),
        matrix(torch.tensor(p.W_v), ["r1", "r2"], ["c1", "c2"], 0, "W_V"),
        "Each row of Q, K, V is that token's row of X times the matrix:",
        matrix(torch.cat([tr.Q, tr.K, tr.V], dim=1), _TOK,
               ["q₁", "q₂", "k₁", "k₂", "v₁", "v₂"], 1, "token"),
    ]
    return "\n\n".join(parts)


@example("attention.course.scores", "Raw scores QKᵀ (query row, key column)")
def _course_scores() -> str:
    tr = _course(scale=False)
    i = _TOK.index("sat")
    best = _TOK[int(tr.scores[i].argmax())]
    return (matrix(tr.scores, _TOK, _TOK, 2, "q \\ k")
            + f"\n\nLargest score in the “sat” row: key “{best}” "
            f"({fmt(tr.scores[i].max().item(), 2)}).")


@example("attention.course.weights", "Unscaled weights softmax(QKᵀ), one row per query")
def _course_weights() -> str:
    tr = _course(scale=False)
    sums = tr.weights.sum(-1)
    return (matrix(tr.weights, _TOK, _TOK, 3, "q \\ k")
            + "\n\nRow sums: " + ", ".join(fmt(s, 3) for s in sums.tolist()))


@example("attention.course.output", "Output = weights · V (unscaled)")
def _course_output() -> str:
    tr = _course(scale=False)
    w0 = tr.weights[0].tolist()
    terms = " + ".join(f"{fmt(w)}·v_{t}" for w, t in zip(w0, _TOK))
    return (matrix(tr.output, _TOK, ["out₁", "out₂"], 3, "token")
            + f"\n\nRow “the” = {terms} = [{fmt(tr.output[0, 0].item())}, "
            f"{fmt(tr.output[0, 1].item())}]")


# The course prints this row of the scaled example; we show it next to the computed one.
COURSE_PRINTED_SCALED_ROW3 = (0.218, 0.218, 0.346, 0.218)


@example("attention.course.scaled_weights", "Scaled weights softmax(QKᵀ/√2)")
def _course_scaled() -> str:
    tr = _course(scale=True)
    raw = _course(scale=False)
    i = _TOK.index("sat")
    printed = " ".join(f"{v:.3f}" for v in COURSE_PRINTED_SCALED_ROW3)
    row3 = tr.weights[3]
    return "\n\n".join([
        f"√d_k = √2 = {fmt(tr.scale, 4)}. Scaled scores:",
        matrix(tr.scaled, _TOK, _TOK, 3, "q \\ k"),
        "Weights:",
        matrix(tr.weights, _TOK, _TOK, 3, "q \\ k"),
        f"“sat” on itself: {fmt(raw.weights[i, i].item())} unscaled → "
        f"{fmt(tr.weights[i, i].item())} scaled (flatter).",
        f"Row “down” works out to [{' '.join(fmt(v) for v in row3.tolist())}]. The course "
        f"prints [{printed}] for this row; that is a slip, since the softmax of "
        f"[{' '.join(fmt(v) for v in tr.scaled[3].tolist())}] gives the values above.",
    ])


@example("attention.course.scaled_output", "Output with scaling, next to the unscaled one")
def _course_scaled_output() -> str:
    s, u = _course(scale=True), _course(scale=False)
    return matrix(torch.cat([u.output, s.output], dim=1), _TOK,
                  ["unscaled₁", "unscaled₂", "scaled₁", "scaled₂"], 3, "token")


@example("attention.course.causal", "Causal, scaled weights for “the cat sat down”")
def _course_causal() -> str:
    tr = _course(scale=True, causal=True)
    return "\n\n".join([
        "Scores after the mask (−∞ above the diagonal):",
        matrix(tr.masked, _TOK, _TOK, 3, "q \\ k"),
        "Weights after the softmax:",
        matrix(tr.weights, _TOK, _TOK, 3, "q \\ k"),
        f"Row “the” sees only itself, so its output equals v_the = "
        f"[{', '.join(fmt(v, 1) for v in tr.output[0].tolist())}].",
    ])


@example("attention.causal.mask", "The causal mask for four positions (1 = may look)")
def _mask() -> str:
    m = attention.causal_mask(4).to(torch.float64)
    return matrix(m, [f"pos {i}" for i in range(4)], [f"{j}" for j in range(4)], 0, "i \\ j")


# ---------------------------------------------------------------------------------------------
# Five tokens, d = 4, two heads (our own numbers).

_FIVE = list(attention.FIVE_TOKEN_EXAMPLE.tokens)


@example("attention.five.causal", "Five tokens, d = 4: bidirectional vs causal weights")
def _five_causal() -> str:
    p = attention.FIVE_TOKEN_EXAMPLE
    both = attention.run_preset(p, causal=False)
    causal = attention.run_preset(p, causal=True)
    return "\n\n".join([
        "Without the mask (every token sees every token):",
        matrix(both.weights, _FIVE, _FIVE, 2, "q \\ k"),
        "With the causal mask:",
        matrix(causal.weights, _FIVE, _FIVE, 2, "q \\ k"),
        f"First row with the mask: {fmt(causal.weights[0, 0].item(), 2)} on itself.",
    ])


@example("attention.mha.heads", "Two heads on the five-token example")
def _mha_heads() -> str:
    p = attention.FIVE_TOKEN_EXAMPLE
    tr = attention.multi_head_attention(p.X, p.W_q, p.W_k, p.W_v, p.W_o, p.n_heads, causal=True)
    dh = tr.Q.shape[1] // tr.n_heads
    out = [f"d = {tr.Q.shape[1]}, h = {tr.n_heads}, so each head works on d_k = {dh} columns. "
           f"Q is {tuple(tr.Q.shape)}; split_heads makes it "
           f"{tuple(attention.split_heads(tr.Q, tr.n_heads).shape)}."]
    for h, head in enumerate(tr.heads):
        out.append(f"Head {h} weights (columns {h * dh}–{(h + 1) * dh - 1} of Q, K):")
        out.append(matrix(head.weights, _FIVE, _FIVE, 2, "q \\ k"))
    out.append("Concatenated head outputs (before W_O):")
    out.append(matrix(tr.concat, _FIVE, [f"c{j}" for j in range(tr.concat.shape[1])], 2, "token"))
    return "\n\n".join(out)


# ---------------------------------------------------------------------------------------------
# Why √d_k.


@example("attention.scaling.table", "Random q, k with unit variance: raw vs scaled scores")
def _scaling_table() -> str:
    rows = []
    for d in (2, 16, 64, 128, 512):
        s = attention.scaling_demo(d, T=8, trials=2000, seed=0)
        rows.append([d, fmt(d ** 0.5, 1), fmt(s.std_raw, 2), fmt(s.std_scaled, 2),
                     fmt(s.max_weight_raw, 2), fmt(s.max_weight_scaled, 2)])
    return (table(["d_k", "√d_k", "std raw", "std scaled", "top w raw", "top w scaled"], rows)
            + "\n\n“top w” is the average largest softmax weight over 8 keys "
            "(1.00 would be one-hot; 0.125 would be uniform).")


@example("attention.scaling.d64", "d_k = 64: how peaked the softmax gets")
def _scaling_64() -> str:
    s = attention.scaling_demo(64, T=8, trials=2000, seed=0)
    import math
    return table(["", "raw q·k", "q·k / 8"], [
        ["std of score", fmt(s.std_raw, 2), fmt(s.std_scaled, 2)],
        ["mean top weight", fmt(s.max_weight_raw, 3), fmt(s.max_weight_scaled, 3)],
        ["mean entropy (nats)", fmt(s.entropy_raw, 3), fmt(s.entropy_scaled, 3)],
        ["entropy if uniform", fmt(math.log(8), 3), fmt(math.log(8), 3)],
    ])


@example("attention.scaling.exp_gap", "How far apart e^s gets for large scores")
def _exp_gap() -> str:
    import math
    rows = [[s, f"{math.exp(s):.3g}", f"{math.exp(-s):.3g}", f"{math.exp(2 * s):.3g}"]
            for s in (1, 3, 8, 11)]
    return table(["s", "e^s", "e^−s", "ratio"], rows)
