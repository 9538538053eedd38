"""The hidden tests: one :class:`~minigpt.katas.checkers.base.Checker` per kata, found by name.

Each checker module imports torch; this table names them as text so that listing the katas, or
importing this package, stays torch-free.
"""

from __future__ import annotations

from importlib import import_module

from minigpt.errors import KataError

MODULES = {
    "softmax": "attention", "attention": "attention", "split_heads": "attention",
    "merge_heads": "attention", "multi_head_attention": "attention", "kv_cache_step": "attention",
    "layer_norm": "layers", "gelu": "layers", "cross_entropy": "layers",
    "sinusoidal_positions": "layers", "rope": "layers",
    "sampling_filter": "training", "bpe_merge": "training", "lr_schedule": "training",
    "adamw_step": "training", "gpt_params": "training", "bpe_encode": "training", "newton_schulz": "training",
    "gqa_kv_step": "inference", "top_p_sample": "inference", "causal_padding_mask": "inference",
    "tiled_attention": "tiled",
}


def checker(name: str):
    """The checker of the kata called ``name`` (its module is imported on first use)."""
    if name not in MODULES:
        raise KataError(f"kata {name!r} has no checker in minigpt.katas.checkers")
    return import_module(f"minigpt.katas.checkers.{MODULES[name]}").CHECKERS[name]
