"""Worked examples for "Initialization": measured on a fresh MiniGPT at several depths."""

from __future__ import annotations

import math
from functools import cache

from minigpt.teaching import init_stats
from minigpt.teaching.examples.registry import example, fmt, table

DEPTHS = (2, 6, 12)
DEEP = 12
BATCH = 4  # 4 rows of 16 tokens: enough for stable spreads, quick enough to run on opening


@cache
def _measure(n_layers: int, scheme: str) -> init_stats.InitStats:
    return init_stats.measure(n_layers, scheme, batch=BATCH)


@example("init.numbers", "The two numbers of GPT-2's initialization, and our model's measured ones")
def _numbers() -> str:
    from minigpt.teaching.shipped import shipped_model

    ours = shipped_model().config
    rows = [[L, fmt(0.02 / math.sqrt(2 * L), 5)] for L in sorted({ours.n_layers, 12, 48})]
    model = init_stats.build(ours.n_layers, "gpt2", d_model=ours.d_model, n_heads=ours.n_heads,
                    vocab_size=ours.vocab_size, block_size=ours.block_size)
    emb = model.tok_emb.weight.std().item()
    writers = init_stats.residual_writer_std(model)
    return (table(["layers L", "0.02/√(2L)"], rows)
            + f"\n\nMeasured on a fresh copy of our {ours.n_layers}-layer MiniGPT: token embedding std "
              f"{fmt(emb, 4)}, W_O and FFN-down std {fmt(writers, 5)} (expected "
              f"{fmt(0.02 / math.sqrt(2 * ours.n_layers), 5)}).")


@example("init.depth", "Residual stream after the last block, and the first loss, by depth")
def _depth() -> str:
    rows = []
    for L in DEPTHS:
        stats = {s: _measure(L, s) for s in init_stats.SCHEMES}
        ratio = stats["std-1"].stream_std[-1] / stats["gpt2"].stream_std[-1]
        rows.append([L] + [fmt(stats[s].stream_std[-1], 3) for s in init_stats.SCHEMES]
                    + [fmt(stats["gpt2"].initial_loss, 2), fmt(stats["std-1"].initial_loss, 1)])
    return (table(["L", "std gpt2", "no scaling", "std-1", "loss gpt2", "loss std-1"], rows)
            + f"\n\nA uniform guess over 27 characters has loss ln 27 = "
              f"{fmt(init_stats.uniform_guess_loss(), 2)}: the GPT-2 scheme starts there, as a fresh model "
              "should. Without the 1/√(2L) scaling the stream's spread grows with depth; with "
              f"std 1 it is {ratio:,.0f} times larger at depth {DEPTHS[-1]} and the first loss "
              "is far above ln 27: the model starts out confidently wrong.")


@example("init.layers", f"Block by block in a {DEEP}-layer MiniGPT: stream and gradient spread")
def _layers() -> str:
    stats = {s: _measure(DEEP, s) for s in init_stats.SCHEMES}
    rows = []
    for b in (0, 2, 5, 8, 11):
        rows.append([b + 1] + [fmt(stats[s].stream_std[b], 3) for s in ("gpt2", "no-scaling")]
                    + [f"{stats[s].grad_std[b]:.2e}" for s in init_stats.SCHEMES])
    spread = {s: max(st.grad_std) / min(st.grad_std) for s, st in stats.items()}
    return (table(["block", "x gpt2", "x no-scal.", "∇ gpt2", "∇ no-scal.", "∇ std-1"], rows)
            + "\n\nx: std of the residual stream after the block; ∇: std of the loss's gradient "
              "with respect to it (per position). Largest over smallest gradient across blocks: "
            + ", ".join(f"{s} {spread[s]:.1f}×" for s in init_stats.SCHEMES)
            + ". Even gradients let every layer learn at the same pace.")
