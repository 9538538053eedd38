"""The attention stepper on a trained model: one layer (or one head) of a checkpoint's MiniGPT, on
a typed name, or on the learner's own sentence for a pretrained GPT-2 (minigpt.pretrained).

``trained_state`` turns a loaded checkpoint into the stepper's inputs so that every stage the
stepper shows is what that model computes: X is what the layer's attention reads (the embeddings
after the earlier blocks and the layer's norm, captured from a real forward pass), W_Q, W_K and
W_V are the columns of its fused qkv matrix, W_O its output projection. A bias is folded in
exactly: X gets a last column of ones and each W a last row holding the bias, so X·W = x·W + b.
With grouped-query attention each query head's key and value columns are repeated, as the model
does. Models whose attention is not Q = X·W_Q (RoPE rotates q and k per position; QK-norm
rescales them) are refused with a CheckpointError naming why.
"""

from __future__ import annotations

import torch

from minigpt.errors import CheckpointError
from minigpt.teaching.explorers import name_ids
from minigpt.teaching.stepper import StepperState

MAX_TOKENS = 8  # the start token and up to 7 letters: T×T matrices that fit beside each other


def _rows(m: torch.Tensor) -> list[list[float]]:
    return [[float(v) for v in row] for row in m]


def check_steppable(ckpt) -> None:
    """CheckpointError unless the stepper's Q = X·W_Q describes this model's attention."""
    if ckpt.kind != "gpt":
        raise CheckpointError(f"{ckpt.path} is a {ckpt.kind} model: only a MiniGPT has attention to step through")
    cfg = ckpt.model_config
    if getattr(cfg, "pos_encoding", None) == "rope":
        raise CheckpointError("this model uses RoPE: its queries and keys are rotated per position, which "
                              "Q = X·W_Q cannot show (its trained heads are in the explorers, o)")
    if getattr(cfg, "qk_norm", False):
        raise CheckpointError("this model uses QK-norm: its queries and keys are rescaled after W_Q and W_K, "
                              "which the stepper cannot show (its trained heads are in the explorers, o)")
    blocks = getattr(ckpt.model, "blocks", None)
    if blocks is None or not all(hasattr(b, "attn") and hasattr(b.attn, "qkv") for b in blocks):
        raise CheckpointError("this model's attention is not the fused Q|K|V layer the stepper reads")


def text_ids(ckpt, text: str, limit: int) -> tuple[list[int], list[str]]:
    """The ids the model reads and the labels the stepper shows: a name after the start token
    (the tutor's character models), or the learner's own sentence as BPE pieces (a pretrained
    checkpoint, which carries a ``tokenizer``; its spaces show as ␣)."""
    tokenizer = getattr(ckpt, "tokenizer", None)
    if tokenizer is None:
        return name_ids(ckpt.vocab, text, limit)
    if not text.strip():
        raise ValueError("type a sentence, e.g. The cat sat on the mat")
    ids = tokenizer.encode(text)
    if len(ids) > limit:
        raise ValueError(f"the stepper shows at most {limit} tokens; that sentence is {len(ids)}: shorten it")
    return ids, [tokenizer.piece(i) for i in ids]


@torch.no_grad()
def trained_state(ckpt, name: str, layer: int, head: int | None = None) -> StepperState:
    """The stepper's inputs for ``layer`` (0-based) of ``ckpt``'s model reading ``name`` (a
    sentence for a pretrained model); ``head`` (0-based) keeps that head's columns of W_Q, W_K and
    W_V and its rows of W_O alone: one head of a wide model (GPT-2's 12 × 64 of 768) at a size
    the stepper can show, and what that head adds to the residual stream."""
    check_steppable(ckpt)
    model, cfg = ckpt.model, ckpt.model_config
    if not 0 <= layer < cfg.n_layers:
        raise ValueError(f"the model has layers 1 to {cfg.n_layers}")
    if head is not None and not 0 <= head < cfg.n_heads:
        raise ValueError(f"the model has heads 1 to {cfg.n_heads} in each layer")
    ids, labels = text_ids(ckpt, name, min(cfg.block_size, MAX_TOKENS))
    attn = model.blocks[layer].attn
    seen = {}

    def capture(module, args) -> None:  # (None: the call goes on with its own arguments)
        seen.setdefault("x", args[0].detach())

    hook = attn.register_forward_pre_hook(capture)
    was_training = model.training
    model.eval()
    try:
        model(torch.tensor([ids]))
    finally:
        hook.remove()
        model.train(was_training)
    X = seen["x"][0].double()
    C, kv, hd = cfg.d_model, attn.kv_dim, attn.head_dim
    W = attn.qkv.weight.detach().double().T  # (C, C + 2·kv): x·W = [q | k | v]
    bias = attn.qkv.bias
    if bias is not None:  # fold the bias in: a column of ones in X, the bias as W's last row
        X = torch.cat([X, torch.ones(len(ids), 1, dtype=torch.float64)], dim=1)
        W = torch.cat([W, bias.detach().double()[None]], dim=0)
    W_q, W_k, W_v = W[:, :C], W[:, C:C + kv], W[:, C + kv:]
    group = cfg.n_heads // attn.n_kv_heads
    if group > 1:  # grouped-query: each query head reads its group's key and value head
        cols = torch.arange(C).view(cfg.n_heads, hd) // hd // group * hd + torch.arange(hd)
        W_k, W_v = W_k[:, cols.flatten()], W_v[:, cols.flatten()]
    W_o, n_heads, title = attn.proj.weight.detach().double().T, cfg.n_heads, f"layer {layer + 1}/{cfg.n_layers}"
    if head is not None:
        cols = slice(head * hd, (head + 1) * hd)
        W_q, W_k, W_v, W_o, n_heads = W_q[:, cols], W_k[:, cols], W_v[:, cols], W_o[cols], 1
        # The trained-heads grid and the head scores count from 0 (L4H1 there is layer 5, head 2 here).
        title += f", head {head + 1}/{cfg.n_heads} (L{layer}H{head})"
    shown = "".join(labels) if getattr(ckpt, "tokenizer", None) is not None else "".join(labels[1:])
    state = StepperState(name=f"{shown} · {title}", tokens=labels, X=_rows(X), W_Q=_rows(W_q), W_K=_rows(W_k),
                         W_V=_rows(W_v), W_O=_rows(W_o), n_heads=n_heads, causal=True)
    state.dim_labels = [f"d{j}" for j in range(C)] + (["1"] if bias is not None else [])
    return state


def load_steppable(path):
    """The checkpoint at ``path``: the tutor's own, or a GPT-2 folder (minigpt.pretrained)."""
    from minigpt.checkpoint import load_checkpoint
    from minigpt.pretrained.gpt2 import is_pretrained_folder, load_gpt2

    return load_gpt2(path) if is_pretrained_folder(path) else load_checkpoint(path)


def parse_layer_head_sentence(text: str) -> tuple[str, int, int]:
    """"5 3 The cat sat" → ("The cat sat", 5, 3): a layer and a head counted from 1, then the
    sentence a pretrained model reads (its own spaces kept)."""
    parts = text.strip().split(" ", 2)
    if len(parts) < 3 or not parts[0].isdigit() or not parts[1].isdigit() or not parts[2].strip():
        raise ValueError("type a layer, a head and your sentence, e.g. 5 1 The cat sat on the mat")
    return parts[2], int(parts[0]), int(parts[1])


def parse_name_layer(text: str) -> tuple[str, int]:
    """"emma 2" → ("emma", 2): the name the model reads and a layer counted from 1 (1 if left out)."""
    parts = text.split()
    if not parts or len(parts) > 2 or (len(parts) == 2 and not parts[1].isdigit()):
        raise ValueError("type a name and a layer number, e.g. emma 1")
    return parts[0], int(parts[1]) if len(parts) == 2 else 1


def parse_shape(text: str) -> tuple[int, int, int]:
    """"6 4 2" → the random preset's shape (T, d, heads); ValueError saying what is allowed."""
    parts = text.replace(",", " ").split()
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise ValueError("type three whole numbers: T d heads, e.g. 6 4 2")
    T, d, h = map(int, parts)
    if not (1 <= T <= 8 and 1 <= d <= 8):
        raise ValueError(f"need 1 ≤ T ≤ 8 and 1 ≤ d ≤ 8 (got T={T}, d={d})")
    if h < 1 or d % h:
        raise ValueError(f"heads must divide d: {h} does not divide {d}")
    return T, d, h
