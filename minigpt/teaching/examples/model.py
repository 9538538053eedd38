"""Worked examples for the pieces around attention: norms, positions, the FFN, residuals, data.

Registered into ``minigpt.teaching.examples.registry.EXAMPLES``; see that module for why numbers live in code.
"""

from __future__ import annotations

import math

import torch

from minigpt.data import IGNORE, EncodedSplit, Vocab
from minigpt.teaching import attention, norms, positions
from minigpt.teaching.examples.registry import count, example, fmt, matrix, table
from minigpt.teaching.shipped import shipped_model


def _vec(v, digits: int = 3) -> str:
    return "[" + ", ".join(fmt(x, digits) for x in torch.as_tensor(v).tolist()) + "]"


# ---------------------------------------------------------------------------------------------
# Normalisation

LN_INPUT = (2.0, 4.0, 6.0, 8.0)


@example("norm.layernorm", "LayerNorm of one token x = [2, 4, 6, 8]")
def _layernorm() -> str:
    x = torch.tensor(LN_INPUT, dtype=torch.float64)
    mu = x.mean().item()
    var = x.var(unbiased=False).item()
    y = norms.layer_norm(x)
    y_eps = norms.layer_norm(x, eps=1e-5)
    return table(["step", "value"], [
        ["mean μ", fmt(mu, 3)],
        ["variance σ² (divide by d)", fmt(var, 3)],
        ["σ = √σ²", fmt(math.sqrt(var), 3)],
        ["(x − μ)/σ", _vec(y)],
        ["same with ε = 1e-5", _vec(y_eps)],
        ["mean, std of result", f"{fmt(y.mean().item())}, {fmt(y.std(unbiased=False).item())}"],
    ])


BATCH = ((2.0, 4.0, 6.0, 8.0), (1.0, 1.0, 1.0, 5.0), (0.0, 3.0, 3.0, 6.0))


@example("norm.layer_vs_batch", "Same 3×4 batch, normalised two ways")
def _layer_vs_batch() -> str:
    x = torch.tensor(BATCH, dtype=torch.float64)
    rows = [f"ex {i}" for i in range(x.shape[0])]
    cols = [f"f{j}" for j in range(x.shape[1])]
    ln, bn = norms.layer_norm(x), norms.batch_norm(x)
    first_alone = norms.batch_norm(x[:2])
    return "\n\n".join([
        "Input (rows are examples, columns are features):",
        matrix(x, rows, cols, 1, "x"),
        "LayerNorm: each row on its own (row means 0):",
        matrix(ln, rows, cols, 3, "LN"),
        "BatchNorm: each column across the batch (column means 0):",
        matrix(bn, rows, cols, 3, "BN"),
        f"Drop ex 2 from the batch and BatchNorm of ex 0 becomes {_vec(first_alone[0])}; "
        f"LayerNorm of ex 0 stays {_vec(ln[0])}.",
    ])


@example("norm.rmsnorm", "RMSNorm vs LayerNorm on [2, 4, 6, 8]")
def _rmsnorm() -> str:
    x = torch.tensor(LN_INPUT, dtype=torch.float64)
    rms = math.sqrt((x * x).mean().item())
    shifted = x + 10
    return table(["", "LayerNorm", "RMSNorm"], [
        ["divide by", fmt(math.sqrt(x.var(unbiased=False).item())), f"RMS = {fmt(rms)}"],
        ["x", _vec(norms.layer_norm(x)), _vec(norms.rms_norm(x))],
        ["x + 10", _vec(norms.layer_norm(shifted)), _vec(norms.rms_norm(shifted))],
        ["learned vectors", "γ and β", "γ only"],
    ])


# ---------------------------------------------------------------------------------------------
# Positional encodings


@example("pe.sinusoidal.d4", "Sinusoidal encoding, d = 4, positions 0–3")
def _pe_d4() -> str:
    pe = positions.sinusoidal_pe(4, 4)
    waves = [10000 ** (2 * i / 4) for i in range(2)]
    return (f"Dimensions 0–1 divide the position by {waves[0]:g}, "
            f"dimensions 2–3 by {waves[1]:g}.\n\n"
            + matrix(pe, [f"pos {p}" for p in range(4)],
                     ["sin (÷1)", "cos (÷1)", "sin (÷100)", "cos (÷100)"], 3, ""))


@example("pe.sinusoidal.offset", "PE(p)·PE(p+k) depends on the offset k only (d = 16)")
def _pe_offset() -> str:
    pe = positions.sinusoidal_pe(40, 16)
    rows = []
    for k in (0, 1, 2, 5, 10):
        dots = [torch.dot(pe[p], pe[p + k]).item() for p in (0, 7, 20)]
        rows.append([k] + [fmt(v, 3) for v in dots])
    return table(["offset k", "p = 0", "p = 7", "p = 20"], rows)


@example("pe.learned.params", "What a learned position table costs")
def _pe_learned() -> str:
    c = shipped_model().config
    rows = [["our MiniGPT", c.block_size, c.d_model, count(c.block_size * c.d_model)],
            ["GPT-2 small", 1024, 768, count(1024 * 768)],
            ["sinusoidal, any length", "—", "—", "0"]]
    return table(["model", "positions", "d", "parameters"], rows)


@example("pe.rope.identity", "RoPE: the score depends only on n − m")
def _rope() -> str:
    g = torch.Generator().manual_seed(3)
    q = torch.randn(8, generator=g, dtype=torch.float64).round(decimals=2)
    k = torch.randn(8, generator=g, dtype=torch.float64).round(decimals=2)
    rows = []
    for m, n in ((0, 3), (5, 8), (40, 43), (2, 9), (30, 37)):
        lhs, rhs = positions.rope_identity(q, k, m, n)
        rows.append([m, n, n - m, fmt(lhs, 4), fmt(rhs, 4)])
    norm_q = torch.linalg.vector_norm(q).item()
    norm_rq = torch.linalg.vector_norm(positions.rope_rotate(q, 40)).item()
    return (f"q = {_vec(q, 2)}, k = {_vec(k, 2)} (d = 8)\n\n"
            + table(["m", "n", "n−m", "⟨R_m q, R_n k⟩", "⟨q, R_(n−m) k⟩"], rows)
            + f"\n\nRotation keeps lengths: |q| = {fmt(norm_q)}, |R_40 q| = {fmt(norm_rq)}.")


@example("pe.permutation", "Without positions, shuffling tokens just shuffles outputs")
def _permutation() -> str:
    p = attention.COURSE_EXAMPLE
    X = torch.tensor(p.X, dtype=torch.float64)
    perm = [2, 0, 3, 1]
    a = attention.self_attention(X, p.W_q, p.W_k, p.W_v).output
    b = attention.self_attention(X[perm], p.W_q, p.W_k, p.W_v).output
    toks = list(p.tokens)
    shuffled = [toks[i] for i in perm]
    same = torch.allclose(a[perm], b)
    return (f"Order “{' '.join(shuffled)}” instead of “{' '.join(toks)}”:\n\n"
            + matrix(b, shuffled, ["out₁", "out₂"], 3, "token")
            + f"\n\nEach token's output row is unchanged, only moved: {same}.")


# ---------------------------------------------------------------------------------------------
# Feed-forward network


@example("ffn.gelu", "GELU next to ReLU")
def _gelu() -> str:
    xs = torch.tensor([-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0], dtype=torch.float64)
    exact = torch.nn.functional.gelu(xs)
    approx = torch.nn.functional.gelu(xs, approximate="tanh")
    rows = [[fmt(x, 1), fmt(max(x, 0.0), 3), fmt(e, 4), fmt(a, 4)]
            for x, e, a in zip(xs.tolist(), exact.tolist(), approx.tolist())]
    return table(["x", "ReLU", "GELU x·Φ(x)", "tanh approx"], rows)


@example("ffn.sizes", "FFN parameters per block: GELU (4d) vs SwiGLU")
def _ffn_sizes() -> str:
    rows = []
    for name, d, d_ff_swi in (("d = 64", 64, None), ("GPT-2 small", 768, None),
                              ("LLaMA-2 7B", 4096, 11008)):
        gelu = 2 * d * 4 * d
        hidden = d_ff_swi or int(8 * d / 3)
        swi = 3 * d * hidden
        rows.append([name, count(gelu), hidden, count(swi)])
    return (table(["model", "GELU 2·d·4d", "SwiGLU hidden", "SwiGLU 3·d·hidden"], rows)
            + "\n\nWeights only, no biases. LLaMA-2 7B rounds its hidden size up to 11008.")


# ---------------------------------------------------------------------------------------------
# Residual connections: gradient reaching the input of a deep stack.


def residual_gradients(depth: int = 30, d: int = 16, seed: int = 0) -> tuple[float, float]:
    """Gradient norm at the input of ``depth`` tanh layers, without and with skip connections."""
    g = torch.Generator().manual_seed(seed)
    Ws = [torch.randn(d, d, generator=g, dtype=torch.float64) * (0.5 / math.sqrt(d))
          for _ in range(depth)]
    x0 = torch.randn(d, generator=g, dtype=torch.float64)
    norms = []
    for skip in (False, True):
        x = x0.clone().requires_grad_(True)
        h = x
        for W in Ws:
            f = torch.tanh(W @ h)
            h = h + f if skip else f
        h.sum().backward()
        norms.append(torch.linalg.vector_norm(x.grad).item())
    return norms[0], norms[1]


@example("residual.gradient", "Gradient reaching the input of a deep stack")
def _residual() -> str:
    rows = []
    for depth in (2, 10, 30):
        plain, skip = residual_gradients(depth)
        rows.append([depth, f"{plain:.2e}", f"{skip:.2e}"])
    return (table(["layers", "h = f(h)", "h = h + f(h)"], rows)
            + "\n\nEach layer is tanh(W h) with small random W (d = 16, seed 0); the numbers are "
            "the length of ∂(sum of outputs)/∂input.")


# ---------------------------------------------------------------------------------------------
# How a name becomes a training sequence (whole names, '.' at both ends, padding ignored).

def name_pair(name: str, block: int) -> tuple[list[str], list[str]]:
    """One name as the training pipeline (``minigpt.data.EncodedSplit``) encodes it, as text:
    · marks input padding, — a target the loss skips."""
    vocab = Vocab.from_words([name])
    encoded = EncodedSplit([name], vocab, block)
    real = int(encoded.lengths[0])
    x = [vocab.chars[t] if i < real else "·" for i, t in enumerate(encoded.x[0].tolist())]
    return x, _targets_as_text(encoded.y[0].tolist(), vocab)


def _targets_as_text(targets: list[int], vocab) -> list[str]:
    return ["—" if t == IGNORE else vocab.chars[t] for t in targets]


@example("data.name_sequence", "One name as one training row (block = 8)")
def _name_sequence() -> str:
    rows = []
    for name in ("emma", "ava"):
        x, y = name_pair(name, 8)
        rows.append([f"{name} in"] + x)
        rows.append([f"{name} target"] + y)
    return (table(["row"] + [str(i) for i in range(8)], rows)
            + "\n\n· is padding; — is a target the loss skips (ignore_index). "
            "Each row gives one prediction per real position, so the loss has as many "
            "targets as the name has characters plus one.")


@example("data.packed_row", "Two names packed into one row, and the mask that keeps them apart")
def _packed_row() -> str:
    from minigpt.models.gpt import word_mask

    words = ["ava", "bo"]
    vocab = Vocab.from_words(words)
    packed = EncodedSplit(words, vocab, block_size=8).packed_batch(torch.tensor([0, 1]))
    width = packed.x.shape[1]
    labels = [vocab.chars[t] for t in packed.x[0].tolist()]
    row = [["input"] + labels,
           ["target"] + _targets_as_text(packed.y[0].tolist(), vocab),
           ["position"] + [str(p) for p in packed.positions[0].tolist()],
           ["word"] + [words[w] if w >= 0 else "·" for w in packed.segments[0].tolist()]]
    mask = word_mask(packed.segments)[0, 0].int().tolist()
    grid = [[f"{i} {labels[i]}"] + [str(v) for v in mask[i]] for i in range(width)]
    return (table(["row"] + [str(i) for i in range(width)], row)
            + "\n\nWhich keys each query may attend to (1 = allowed): causal, and only inside its own name.\n\n"
            + table(["query"] + [str(j) for j in range(width)], grid)
            + "\n\nPositions restart at 0 for the second name, so it is embedded exactly as if it "
              "had a row of its own; no padding is left to compute in this row.")


# The sizes every MiniGPT is built at; what is left of GPTConfig are the architecture's options.
_SIZES = ("vocab_size", "block_size", "d_model", "n_heads", "n_layers")


def _option_label(name: str) -> str:
    from minigpt.training.options import OPTIONS_BY_NAME

    spec = OPTIONS_BY_NAME.get(name)
    return spec.label if spec is not None else name.replace("_", " ")


@example("model.shipped_recipe", "What the shipped model adds to this lesson's (read from its checkpoint)")
def _shipped_recipe() -> str:
    from dataclasses import fields

    from minigpt.models.config import GPTConfig
    from minigpt.training.option_spec import format_value

    ours = shipped_model()
    cfg, r = ours.config, ours.recipe
    plain = GPTConfig(**{k: getattr(cfg, k) for k in _SIZES})
    changed = [f"{_option_label(f.name)} = {format_value(getattr(cfg, f.name))}" for f in fields(GPTConfig)
               if f.name not in _SIZES and getattr(cfg, f.name) != getattr(plain, f.name)]
    architecture = ("nothing. It is the model drawn above, every option of the architecture (the speedrun's "
                    "tricks among them) at its default" if not changed else "; ".join(changed))
    if r.get("optimizer") == "muon":
        optimiser = [["block matrices", f"Muon, lr {r['muon_lr']:g}"],
                     ["everything else", f"AdamW, lr {r['lr']:g}"]]
    else:
        optimiser = [["optimiser", f"AdamW, lr {r['lr']:g}"]]
    floor = r.get("min_lr_ratio", 0.0)
    decay = "cosine decay" if r.get("schedule", "cosine") == "cosine" else "flat, then a cooldown"
    rows = optimiser + [
        ["batch", f"{r['batch_size']} names a step, " + ("packed several to a row" if r.get("pack") else "padded")],
        ["schedule", f"{100 * r['warmup']:g}% warmup, {decay} to "
                     + (f"{100 * floor:g}% of the peak" if floor else "zero")],
        ["weights kept", f"a moving average, decay {format_value(r['ema'])}" if r.get("ema") else "the live ones"],
        ["steps", f"{count(ours.steps_trained)} in {ours.train_seconds:.0f} s on {ours.device}"],
        ["kept", f"step {count(ours.best_step)}, the best validation loss"],
        ["loss", f"validation {fmt(ours.val_loss)}, test {fmt(ours.test_loss)}"],
    ]
    return (f"Our MiniGPT as shipped (`checkpoints/default`): {ours.shape}, {count(ours.n_params)} parameters.\n\n"
            f"Architecture changed from this lesson's: {architecture}.\n\n"
            + table(["how it was trained", "the shipped run"], rows))
