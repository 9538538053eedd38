"""A small GPT-2 folder with random weights in the hub's layout, written without ``transformers``
(whose import takes seconds): for the screens and lessons that only need *a* GPT-2 folder. The
loader's agreement with ``transformers`` is pinned by tests/test_pretrained_gpt2.py."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors.torch import save_file

# A few merges so some pieces are longer than a byte (" the", "he", "at").
MERGES = [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("a", "t"), ("Ġ", "c"), ("Ġc", "at")]


def write_random_gpt2(folder: Path, n_positions: int = 64, n_embd: int = 32, n_layer: int = 2,
                      n_head: int = 4, seed: int = 0) -> Path:
    """``folder`` holding config.json, model.safetensors, vocab.json and merges.txt of a random
    GPT-2 (its vocabulary: the 256 bytes, the merges, then ``<|endoftext|>``)."""
    from minigpt.pretrained.byte_bpe import byte_alphabet

    folder.mkdir(parents=True, exist_ok=True)
    vocab = {c: i for i, c in enumerate(byte_alphabet().values())}
    for a, b in MERGES:
        vocab[a + b] = len(vocab)
    vocab["<|endoftext|>"] = eos = len(vocab)
    V, d, T = len(vocab), n_embd, n_positions
    generator = torch.Generator().manual_seed(seed)

    def rand(*shape):
        return torch.randn(*shape, generator=generator) * 0.2

    weights = {"wte.weight": rand(V, d), "wpe.weight": rand(T, d), "ln_f.weight": torch.ones(d), "ln_f.bias": torch.zeros(d)}
    for i in range(n_layer):
        weights |= {f"h.{i}.ln_1.weight": torch.ones(d), f"h.{i}.ln_1.bias": torch.zeros(d),
                    f"h.{i}.ln_2.weight": torch.ones(d), f"h.{i}.ln_2.bias": torch.zeros(d),
                    f"h.{i}.attn.c_attn.weight": rand(d, 3 * d), f"h.{i}.attn.c_attn.bias": rand(3 * d),
                    f"h.{i}.attn.c_proj.weight": rand(d, d), f"h.{i}.attn.c_proj.bias": torch.zeros(d),
                    f"h.{i}.mlp.c_fc.weight": rand(d, 4 * d), f"h.{i}.mlp.c_fc.bias": torch.zeros(4 * d),
                    f"h.{i}.mlp.c_proj.weight": rand(4 * d, d), f"h.{i}.mlp.c_proj.bias": torch.zeros(d),
                    f"h.{i}.attn.bias": torch.ones(T, T).tril()[None, None]}
    save_file(weights, folder / "model.safetensors")
    (folder / "config.json").write_text(json.dumps({
        "model_type": "gpt2", "vocab_size": V, "n_positions": T, "n_embd": d, "n_layer": n_layer,
        "n_head": n_head, "bos_token_id": eos, "eos_token_id": eos}))
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in MERGES))
    return folder
