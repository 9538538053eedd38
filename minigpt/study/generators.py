"""Numeric card generators: each turns a few parameters into (prompt, value, answer, worked solution).

Deck files name a generator and give its parameters (``[[numeric]]`` in ``lessons/decks``); the
number itself is always computed here, with the library's own maths where it has some, so a card
cannot drift from the lessons. The registry at the bottom gives each generator its default
tolerance (relative, absolute): the wider one applies, and the question states it.
A prompt never contains its answer; tests/test_content_rules.py checks that for every card.
"""

from __future__ import annotations

import math

import torch

from minigpt.teaching.attention import softmax, split_heads
from minigpt.teaching.norms import layer_norm, rms_norm
from minigpt.teaching.parallelism import STAGES, bubble_fraction, memory_per_device
from minigpt.teaching.positions import sinusoidal_pe

Generated = tuple[str, float | tuple[int, ...], str, str]


def _n(x: float) -> str:
    """A number as the solutions print it: thousands separated, else four significant digits."""
    if float(x).is_integer() and abs(x) >= 1000:
        return f"{int(x):,}"
    return f"{x:.4g}"


def block_params(d: int) -> dict[str, int]:
    """Parameters of one pre-norm GPT block with biases and a 4x FFN, part by part."""
    attention = 4 * d * d + 4 * d          # W_Q, W_K, W_V, W_O and their biases
    ffn = d * 4 * d + 4 * d + 4 * d * d + d  # d -> 4d and 4d -> d, with biases
    norms = 2 * 2 * d                      # two LayerNorms, each a gain and a shift
    return {"attention": attention, "ffn": ffn, "layernorms": norms,
            "total": attention + ffn + norms}


def _block_params(d: int) -> Generated:
    p = block_params(int(d))
    prompt = (f"How many trainable numbers sit in one pre-norm GPT block with d_model = {d}, "
              f"biases everywhere and a feed-forward layer 4× wide? (Ignore embeddings.)")
    sol = (f"attention: 4·d² + 4·d = {p['attention']:,}\n"
           f"feed-forward: d·4d + 4d + 4d·d + d = 8·d² + 5·d = {p['ffn']:,}\n"
           f"two LayerNorms (gain + shift each): 4·d = {p['layernorms']:,}\n"
           f"total: 12·d² + 13·d = {p['total']:,} ≈ {p['total'] / 1e6:.2f}M")
    return prompt, float(p["total"]), f"{p['total']:,}", sol


def _softmax(scores: list[float], pick: int = 0) -> Generated:
    w = softmax(torch.tensor(scores, dtype=torch.float64))
    m = max(scores)
    exps = [math.exp(s - m) for s in scores]
    shown = ", ".join(f"{s:g}" for s in scores)
    prompt = f"Scores [{shown}] go through a softmax. What weight does position {pick + 1} get?"
    sol = (f"subtract the max ({m:g}) for stability: exp(s − {m:g}) = "
           + ", ".join(f"{e:.4f}" for e in exps)
           + f"\nsum = {sum(exps):.4f}\nweights = " + ", ".join(f"{float(x):.3f}" for x in w)
           + f"\nposition {pick + 1}: {float(w[pick]):.3f} (the row sums to 1)")
    return prompt, float(w[pick]), f"{float(w[pick]):.3f}", sol


def _sqrt_scale(score: float, d_k: int) -> Generated:
    root = math.sqrt(d_k)
    val = score / root
    prompt = (f"A query·key dot product comes out at {score:g} in a head with d_k = {d_k}. "
              f"What number enters the softmax once it has been scaled?")
    sol = (f"√d_k = √{d_k} = {root:.4g}\nscaled score = {score:g} / {root:.4g} = {val:.4g}\n"
           f"why: with unit-variance entries a d_k-term dot product has variance d_k, so "
           f"dividing by √d_k brings its spread back to about 1")
    return prompt, val, f"{val:.4g}", sol


def _head_split(batch: int, seq: int, d: int, heads: int) -> Generated:
    per_item = split_heads(torch.empty(seq, d, device="meta"), heads)  # the shape only, no memory
    shape = (batch, *per_item.shape)
    prompt = (f"A tensor of queries has shape (B={batch}, T={seq}, d={d}). After splitting into "
              f"{heads} heads and moving the head axis forward, what is its shape?")
    sol = (f"d_head = d / heads = {d} / {heads} = {d // heads}\n"
           f"view as (B, T, heads, d_head) = ({batch}, {seq}, {heads}, {d // heads})\n"
           f"transpose T and heads → (B, heads, T, d_head) = {shape}")
    return prompt, shape, str(shape), sol


def _head_width(d: int, heads: int) -> Generated:
    width = d // heads
    prompt = (f"A model of width d_model = {d:,} splits its attention into {heads} heads. "
              f"How many dimensions does each head's query, key and value work in?")
    sol = (f"the heads share the width equally: d_model / heads = {d:,} / {heads} = {width}\n"
           f"concatenated again, the {heads} heads give back {heads} × {width} = {d:,}")
    return prompt, float(width), f"{width}", sol


def _vector_matrix(x: list[float], w: list[list[float]], pick: int) -> Generated:
    out = torch.tensor(x, dtype=torch.float64) @ torch.tensor(w, dtype=torch.float64)
    cols = [[row[j] for row in w] for j in range(len(w[0]))]
    which = ("first", "second", "third", "fourth")[pick]
    prompt = (f"A token's embedding is x = {x} and W_V has rows {w}. "
              f"What is the {which} entry of its value vector v = x·W_V?")
    terms = " + ".join(f"{a:g}·{b:g}" for a, b in zip(x, cols[pick]))
    sol = (f"entry {pick + 1} = x times column {pick + 1} of W_V = {terms} = {float(out[pick]):g}\n"
           f"whole vector v = {[round(float(v), 4) for v in out]}")
    return prompt, float(out[pick]), f"{float(out[pick]):g}", sol


def _weighted_sum(weights: list[float], values: list[float]) -> Generated:
    total = float(torch.tensor(weights, dtype=torch.float64) @ torch.tensor(values, dtype=torch.float64))
    prompt = (f"A query's attention weights are {weights} and the (one-number) value vectors "
              f"of those positions are {values}. What number does attention return?")
    terms = " + ".join(f"{w:g}·{v:g}" for w, v in zip(weights, values))
    sol = f"a weighted sum of the values: {terms} = {total:.4g}"
    return prompt, total, f"{total:.4g}", sol


def _dot_spread(d_k: int) -> Generated:
    spread = math.sqrt(d_k)
    prompt = (f"Query and key entries are independent, with mean 0 and variance 1. What is the "
              f"standard deviation of their dot product in a head of width d_k = {d_k}?")
    sol = (f"each term q_i·k_i has mean 0 and variance E[q_i²]·E[k_i²] = 1\n"
           f"the d_k terms are independent, so their variances add up to d_k = {d_k}\n"
           f"standard deviation √{d_k} = {spread:.4g}: the number the scores are divided by")
    return prompt, spread, f"{spread:.4g}", sol


def _attention_params(d: int) -> Generated:
    total = 4 * d * d
    prompt = (f"How many weights (no biases) do W_Q, W_K, W_V and W_O hold together in one "
              f"attention layer of width d = {d}, split into any number of heads?")
    sol = (f"each of the four is d × d = {d * d:,}\n4·d² = {total:,}, the same for 1 head or "
           f"many: heads only slice the width")
    return prompt, float(total), f"{total:,}", sol


def _sinusoid(pos: int, dim: int, d: int) -> Generated:
    value = float(sinusoidal_pe(pos + 1, d)[pos, dim])
    pair = dim // 2
    fn = "sin" if dim % 2 == 0 else "cos"
    rate = 10000 ** (2 * pair / d)
    prompt = (f"Sinusoidal encoding with d = {d}: what is the entry of position {pos} in "
              f"dimension {dim}? (radians)")
    sol = (f"dimension {dim} is pair i = {pair}, a {fn}\ndivisor 10000^(2i/d) = 10000^({2 * pair}/{d})"
           f" = {rate:g}\n{fn}({pos} / {rate:g}) = {value:.4f}")
    return prompt, value, f"{value:.3f}", sol


def _rope_angle(pos: int, pair: int, d: int) -> Generated:
    theta = 10000 ** (-2 * pair / d)
    angle = pos * theta
    prompt = (f"RoPE with head width d = {d}: by what angle (radians) is pair i = {pair} of a "
              f"query at position {pos} turned?")
    sol = (f"θ_i = 10000^(−2i/d) = 10000^(−{2 * pair}/{d}) = {theta:.4g}\n"
           f"angle = position × θ_i = {pos} × {theta:.4g} = {angle:.4g}")
    return prompt, angle, f"{angle:.4g}", sol


def _norm_entry(x: list[float], pick: int, kind: str = "layer") -> Generated:
    t = torch.tensor(x, dtype=torch.float64)
    if kind == "rms":
        out = rms_norm(t)
        rms = math.sqrt(sum(v * v for v in x) / len(x))
        prompt = f"RMSNorm (gain 1, no ε) of x = {x}: what is entry {pick + 1}?"
        sol = (f"RMS = √(mean of squares) = √{sum(v * v for v in x) / len(x):g} = {rms:.4f}\n"
               f"entry {pick + 1} = {x[pick]:g} / {rms:.4f} = {float(out[pick]):.4f} (no mean is "
               f"subtracted)")
    else:
        out = layer_norm(t)
        mu = sum(x) / len(x)
        var = sum((v - mu) ** 2 for v in x) / len(x)
        prompt = f"LayerNorm (γ = 1, β = 0, no ε) of x = {x}: what is entry {pick + 1}?"
        sol = (f"mean μ = {mu:g}; variance (divide by d) = {var:.4g}; σ = {math.sqrt(var):.4f}\n"
               f"entry {pick + 1} = ({x[pick]:g} − {mu:g}) / {math.sqrt(var):.4f} = "
               f"{float(out[pick]):.4f}")
    return prompt, float(out[pick]), f"{float(out[pick]):.3f}", sol


def _gelu(x: float) -> Generated:
    value = float(torch.nn.functional.gelu(torch.tensor(x, dtype=torch.float64)))
    phi = 0.5 * (1 + math.erf(x / math.sqrt(2)))
    prompt = f"What is GELU({x:g}), using the exact x·Φ(x) form?"
    sol = f"Φ({x:g}) = {phi:.4f} (standard normal CDF)\nGELU = {x:g} × {phi:.4f} = {value:.4f}"
    return prompt, value, f"{value:.3f}", sol


def _swiglu_hidden(d: int) -> Generated:
    hidden = 8 * d / 3
    prompt = (f"A SwiGLU feed-forward with d = {d} should cost as many weights as a 4d GELU "
              f"one. About how wide is its hidden layer?")
    sol = (f"GELU FFN: 2 matrices of d × 4d = 8d²\nSwiGLU: 3 matrices of d × h = 3dh\n"
           f"3dh = 8d² → h = 8d/3 = {hidden:.1f} (real models round it, e.g. LLaMA-2 uses 11008 "
           f"for d = 4096)")
    return prompt, hidden, f"{hidden:.0f}", sol


def _rule_of_thumb(layers: int, d: int) -> Generated:
    total = 12 * layers * d * d
    prompt = (f"By the 12·L·d² rule of thumb, about how many weights sit in the blocks of a "
              f"model with L = {layers} layers of width d = {d}?")
    sol = (f"per block: attention 4d² + feed-forward 8d² = 12d² = {12 * d * d:,}\n"
           f"× {layers} layers = {total:,} ≈ {total / 1e6:.3g}M (embeddings not included)")
    return prompt, float(total), f"{total:,}", sol


def _tied_saving(vocab: int, d: int) -> Generated:
    saved = vocab * d
    prompt = (f"A model has a vocabulary of {vocab:,} and width d = {d}. How many parameters "
              f"does using the token embedding as the output head save?")
    sol = f"an untied head is one more d × V matrix: {d} × {vocab:,} = {saved:,} ≈ {saved / 1e6:.3g}M"
    return prompt, float(saved), f"{saved:,}", sol


def _init_loss(vocab: int) -> Generated:
    value = math.log(vocab)
    prompt = (f"An untrained model spreads its bets evenly over the {vocab:,} entries of its "
              f"vocabulary (characters or tokens). What cross-entropy loss (nats) should it "
              f"start near?")
    sol = f"each target gets probability 1/{vocab}, so the loss is −ln(1/{vocab}) = ln {vocab} = {value:.3f}"
    return prompt, value, f"{value:.3f}", sol


def _perplexity(loss: float) -> Generated:
    value = math.exp(loss)
    prompt = f"A validation loss of {loss:g} nats per character is a perplexity of about what?"
    sol = f"perplexity = e^loss = e^{loss:g} = {value:.3g} equally likely choices per step"
    return prompt, value, f"{value:.3g}", sol


def _nats_to_bits(loss: float) -> Generated:
    value = loss / math.log(2)
    prompt = f"A loss of {loss:g} nats per character is how many bits per character?"
    sol = f"bits = nats / ln 2 = {loss:g} / {math.log(2):.4f} = {value:.3f}"
    return prompt, value, f"{value:.3f}", sol


def _dropout_scale(p: float) -> Generated:
    value = 1 / (1 - p)
    prompt = (f"With dropout rate {p:g}, by what factor are the activations that survive "
              f"multiplied during training?")
    sol = (f"a fraction {p:g} is zeroed, so the rest is scaled by 1/(1 − {p:g}) = {value:.4g}, "
           f"keeping the expected activation unchanged; at evaluation nothing is dropped or scaled")
    return prompt, value, f"{value:.4g}", sol


def _warmup_lr(peak: float, warmup: int, step: int) -> Generated:
    """The trainer's convention (minigpt.training.schedule.lr_at) and the lr-schedule kata's:
    steps count from 0 and step s gets peak·(s + 1)/warmup, so step warmup − 1 reaches the peak."""
    value = peak * (step + 1) / warmup
    prompt = (f"Warmup raises the learning rate linearly to a peak of {peak:g} over {warmup:,} "
              f"steps, counted from 0 as the trainer does: step s gets peak × (s + 1) / warmup, "
              f"so step 0 already moves the weights. What is it at step {step:,}?")
    sol = (f"lr = peak × (step + 1) / warmup = {peak:g} × {step + 1:,} / {warmup:,} "
           f"= {value:.4g}")
    return prompt, value, f"{value:.4g}", sol


def _clip_factor(norm: float, limit: float) -> Generated:
    value = min(1.0, limit / norm)
    prompt = (f"The global gradient norm is {norm:g} and the clipping limit is {limit:g}. "
              f"By what factor is every gradient multiplied?")
    sol = (f"factor = min(1, limit / norm) = min(1, {limit:g} / {norm:g}) = {value:.4g}; "
           f"the direction is kept, only the length shrinks")
    return prompt, value, f"{value:.4g}", sol


def _temperature(logits: list[float], temperature: float, pick: int = 0) -> Generated:
    w = softmax(torch.tensor(logits, dtype=torch.float64) / temperature)
    shown = ", ".join(f"{v:g}" for v in logits)
    prompt = (f"Logits [{shown}] are sampled at temperature {temperature:g}. What probability "
              f"does option {pick + 1} get?")
    scaled = ", ".join(f"{v / temperature:.4g}" for v in logits)
    sol = (f"divide by T: [{scaled}]\nsoftmax: " + ", ".join(f"{float(x):.3f}" for x in w)
           + f"\noption {pick + 1}: {float(w[pick]):.3f}")
    return prompt, float(w[pick]), f"{float(w[pick]):.3f}", sol


def _top_k(probs: list[float], k: int, pick: int = 0) -> Generated:
    order = sorted(range(len(probs)), key=lambda i: -probs[i])[:k]
    kept = sum(probs[i] for i in order)
    value = probs[pick] / kept if pick in order else 0.0
    shown = ", ".join(f"{p:g}" for p in probs)
    prompt = (f"Probabilities [{shown}] go through top-k with k = {k}. What probability does "
              f"option {pick + 1} have afterwards?")
    sol = (f"keep the {k} largest: " + ", ".join(f"{probs[i]:g}" for i in order)
           + f" (sum {kept:.4g})\nrenormalise: {probs[pick]:g} / {kept:.4g} = {value:.3f}")
    return prompt, value, f"{value:.3f}", sol


def _kv_numbers(layers: int, tokens: int, d: int) -> Generated:
    total = 2 * layers * tokens * d
    prompt = (f"How many numbers does the KV cache hold for one sequence of {tokens:,} tokens in "
              f"a model with {layers} layers of width d = {d} and plain multi-head attention (as "
              f"many key/value heads as query heads, no grouping)?")
    sol = (f"K and V: 2 tensors per layer, each tokens × d (with grouped-query attention, "
           f"d shrinks to n_kv_heads × head_dim)\n2 × {layers} × {tokens:,} × {d} = "
           f"{total:,} ({total * 2 / 2**20:,.1f} MiB at 2 bytes each)")
    return prompt, float(total), f"{total:,}", sol


def _recompute_rows(tokens: int) -> Generated:
    total = tokens * (tokens + 1) // 2
    prompt = (f"Generating {tokens} tokens one at a time without a cache, each step recomputes "
              f"keys and values for the whole prefix. How many key/value rows is that in total?")
    sol = (f"step t recomputes t rows: 1 + 2 + … + {tokens} = {tokens}·{tokens + 1}/2 = {total:,}"
           f"\nwith a cache: one new row per step, {tokens} in total")
    return prompt, float(total), f"{total:,}", sol


def _attention_entries(n: int) -> Generated:
    total = n * n
    prompt = f"How many entries does one head's attention matrix have for a sequence of {n:,} tokens?"
    sol = f"one score per (query, key) pair: n² = {n:,}² = {total:,} ({total * 2 / 2**20:,.0f} MiB in fp16)"
    return prompt, float(total), f"{total:,}", sol


def _chinchilla_tokens(params: float) -> Generated:
    tokens = 20 * params
    prompt = (f"By the compute-optimal rule of about 20 tokens per parameter, how many training "
              f"tokens suit a model of {params:.3g} parameters?")
    sol = f"D ≈ 20 × N = 20 × {params:.3g} = {tokens:.3g} tokens"
    return prompt, tokens, f"{tokens:.3g}", sol


def _train_flops(params: float, tokens: float) -> Generated:
    flops = 6 * params * tokens
    prompt = (f"About how many floating-point operations does training a {params:.3g}-parameter "
              f"model on {tokens:.3g} tokens take?")
    sol = f"C ≈ 6·N·D = 6 × {params:.3g} × {tokens:.3g} = {flops:.3g} FLOPs"
    return prompt, flops, f"{flops:.3g}", sol


def _power_law_factor(alpha: float, factor: float) -> Generated:
    value = factor ** -alpha
    prompt = (f"Loss follows L(N) = (N_c/N)^α with α = {alpha:g}. By what factor does the loss "
              f"change when N grows {factor:g}-fold?")
    sol = f"L(kN)/L(N) = k^−α = {factor:g}^−{alpha:g} = {value:.4g}"
    return prompt, value, f"{value:.3f}", sol


def _zero_memory(params: float, devices: int, stage: str) -> Generated:
    total = memory_per_device(params, devices, stage).total / 1e9
    prompt = (f"A {params:.3g}-parameter model trains with Adam in mixed precision on {devices} "
              f"GPUs under {stage}. How many GB of weights, gradients and optimizer state does "
              f"each GPU hold (1 GB = 10^9 bytes, activations left out)?")
    shard = ", ".join(k for k, on in zip(("weights", "gradients", "optimizer state"),
                                         STAGES[stage], strict=True) if on) or "nothing"
    sol = f"16 bytes per parameter, with {shard} divided by {devices}: {total:.4g} GB"
    return prompt, total, f"{total:.4g}", sol


def _pipeline_bubble(p: int, m: int) -> Generated:
    value = bubble_fraction(p, m)
    prompt = (f"A fill-and-drain pipeline has {p} stages and {m} micro-batches. What share of "
              f"each stage's time is idle?")
    sol = f"(p − 1)/(m + p − 1) = {p - 1}/{m + p - 1} = {value:.4g}"
    return prompt, value, f"{value:.3f}", sol


# name → (function, default relative tolerance, default absolute tolerance). An answer given to
# three decimals gets 2% or half a unit of its last decimal, whichever is wider: an absolute
# ±0.005 alone would accept "0" for a weight of 0.0049 and give 10–100% slack below 0.05.
GENERATORS = {
    "block_params": (_block_params, 0.01, 0.0),
    "softmax": (_softmax, 0.02, 0.0005),
    "sqrt_scale": (_sqrt_scale, 0.01, 0.0005),
    "head_split": (_head_split, 0.0, 0.0),
    "head_width": (_head_width, 0.0, 0.0),
    "vector_matrix": (_vector_matrix, 0.0, 0.001),
    "weighted_sum": (_weighted_sum, 0.0, 0.005),
    "dot_spread": (_dot_spread, 0.0, 0.01),
    "attention_params": (_attention_params, 0.01, 0.0),
    "sinusoid": (_sinusoid, 0.0, 0.005),
    "rope_angle": (_rope_angle, 0.01, 0.001),
    "norm_entry": (_norm_entry, 0.0, 0.005),
    "gelu": (_gelu, 0.0, 0.005),
    "swiglu_hidden": (_swiglu_hidden, 0.01, 0.0),
    "rule_of_thumb": (_rule_of_thumb, 0.02, 0.0),
    "tied_saving": (_tied_saving, 0.01, 0.0),
    "init_loss": (_init_loss, 0.0, 0.01),
    "perplexity": (_perplexity, 0.02, 0.0),
    "nats_to_bits": (_nats_to_bits, 0.0, 0.01),
    "dropout_scale": (_dropout_scale, 0.0, 0.01),
    "warmup_lr": (_warmup_lr, 0.01, 0.0),
    "clip_factor": (_clip_factor, 0.02, 0.0005),
    "temperature": (_temperature, 0.02, 0.0005),
    "top_k": (_top_k, 0.02, 0.0005),
    "kv_numbers": (_kv_numbers, 0.01, 0.0),
    "recompute_rows": (_recompute_rows, 0.0, 0.0),
    "attention_entries": (_attention_entries, 0.01, 0.0),
    "chinchilla_tokens": (_chinchilla_tokens, 0.05, 0.0),
    "train_flops": (_train_flops, 0.05, 0.0),
    "power_law_factor": (_power_law_factor, 0.0, 0.005),
    "zero_memory": (_zero_memory, 0.01, 0.0),
    "pipeline_bubble": (_pipeline_bubble, 0.02, 0.0005),
}
