"""The explorers' numbers written out step by step: LayerNorm and RMSNorm on a typed vector, the
real model's parameter count, a typed name as token ids. Values come from ``minigpt.teaching.attention``
and ``minigpt.models``; the text formatting is the stepper's (``minigpt.teaching.stepper``).
"""

from __future__ import annotations

import math

import torch

from minigpt.numbers import parse_number
from minigpt.teaching.stepper import term


def parse_vector(text: str) -> list[float]:
    """"2 4 6 8" or "2, 4, 6, 8" → floats; ValueError naming the bad item otherwise."""
    items = text.replace(",", " ").split()
    if not items:
        raise ValueError("type some numbers separated by spaces, e.g. 2 4 6 8")
    return [parse_number(t) for t in items]


def layer_norm_steps(x: list[float]) -> list[str]:
    """LayerNorm written out (ε = 0, γ = 1, β = 0); the last line is attention.layer_norm's result."""
    from minigpt.teaching.norms import layer_norm

    n = len(x)
    mu = sum(x) / n
    dev = [v - mu for v in x]
    var = sum(d * d for d in dev) / n
    y = layer_norm(torch.tensor([x], dtype=torch.float64))[0].tolist()
    vec = lambda vs: "[" + ", ".join(term(v) for v in vs) + "]"  # noqa: E731
    lines = [f"x = {vec(x)}",
             f"μ = ({' + '.join(term(v) for v in x)}) / {n} = {term(mu)}",
             f"x − μ = {vec(dev)}",
             f"σ² = mean((x − μ)²) = ({' + '.join(term(d * d) for d in dev)}) / {n} = {term(var)}",
             f"σ = √{term(var)} = {term(math.sqrt(var))}"]
    if var == 0:
        return lines + ["σ = 0: every entry equals the mean, so (x − μ)/σ is 0/0 (real layers add ε)"]
    return lines + [f"y = (x − μ) / σ = {vec(y)}   (mean 0, variance 1)"]


def rms_norm_steps(x: list[float]) -> list[str]:
    from minigpt.teaching.norms import rms_norm

    ms = sum(v * v for v in x) / len(x)
    if ms == 0:
        return ["RMS = 0: the zero vector cannot be rescaled (real layers add ε)"]
    y = rms_norm(torch.tensor([x], dtype=torch.float64))[0].tolist()
    return [f"RMS = √mean(x²) = √{term(ms)} = {term(math.sqrt(ms))}",
            "y = x / RMS = [" + ", ".join(term(v) for v in y) + "]   (no mean subtracted)"]


def real_param_count(cfg) -> int:
    """sum(p.numel()) of an actual MiniGPT with this config (tied weights counted once)."""
    from minigpt.models.build import on_meta_device
    from minigpt.models.gpt import MiniGPT

    with on_meta_device():  # shapes only: no memory for the weights, instant for GPT-2 sizes
        model = MiniGPT(cfg)
    return sum(p.numel() for p in model.parameters())


def name_ids(vocab, name: str, block_size: int) -> tuple[list[int], list[str]]:
    """The start token then the name's characters, as the model saw names in training."""
    name = name.strip().lower()
    if not name:
        raise ValueError("type a name, e.g. emma")
    ids = [0] + vocab.encode(name)
    if len(ids) > block_size:
        raise ValueError(f"the model reads at most {block_size - 1} characters; {name!r} has {len(name)}")
    return ids, [vocab.chars[0]] + list(name)


SHOWN_SENTENCE_TOKENS = 10  # a pretrained model's every head on a sentence: a focused head's columns and sums fit 80


def sentence_ids(tokenizer, text: str, limit: int = SHOWN_SENTENCE_TOKENS) -> tuple[list[int], list[str]]:
    """The first ``limit`` tokens of the learner's sentence as a pretrained model reads it (its own
    spaces kept, no start token, as the stepper reads it) and their pieces as shown."""
    if not text.strip():
        raise ValueError("type a sentence, e.g. The cat sat on the mat. The cat")
    ids = tokenizer.encode(text)[:limit]
    return ids, [tokenizer.piece(i) for i in ids]


def checkpoint_numbers(path) -> tuple[object, int]:
    """A MiniGPT checkpoint's model config and how many learned numbers its weights file holds
    (read from the safetensors header, nothing loaded; fixed buffers such as a sinusoidal table are
    not learned and not counted). CheckpointError for a damaged folder or another kind of model."""
    from minigpt.checkpoint import WEIGHTS, expected_tensors, read_checkpoint_meta
    from minigpt.errors import CheckpointError
    from minigpt.safetensors_header import read_header

    meta = read_checkpoint_meta(path)
    if meta.kind != "gpt":
        raise CheckpointError(f"{path} is a {meta.kind} model: the counter counts MiniGPTs")
    header = read_header(meta.path / WEIGHTS)
    # The size rule first (a config may claim a million layers), then the saved tensors' names:
    # MiniGPT's only buffers (position tables) are not saved, so these are its learned weights.
    learned = set(expected_tensors(meta))
    return meta.model_config, sum(math.prod(e["shape"]) for name, e in header.items() if name in learned)
