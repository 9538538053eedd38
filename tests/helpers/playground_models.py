"""Three small checkpoints to sample from (a bigram, an MLP and a MiniGPT fitted a little), built
once per test session by the ``playground_checkpoints`` fixture (tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import torch

from minigpt.checkpoint import save_checkpoint
from minigpt.data import load_dataset
from minigpt.models.bigram import Bigram
from minigpt.models.config import BigramConfig, GPTConfig, MLPConfig
from minigpt.models.gpt import MiniGPT
from minigpt.models.mlp import MLP

WORDS = ["emma", "olivia", "ava", "isabella", "sophia", "mia", "amelia", "harper", "evelyn", "abigail",
         "emily", "ella", "elizabeth", "camila", "luna", "sofia", "avery", "mila", "aria", "scarlett",
         "penelope", "layla", "chloe", "victoria", "madison", "eleanor", "grace", "nora", "riley", "zoey"]


def make_checkpoints(root: Path) -> dict[str, Path]:
    """A bigram, an MLP and a MiniGPT fitted a little on WORDS, saved as bundled checkpoints."""
    data_file = root / "words.txt"
    data_file.write_text("\n".join(WORDS) + "\n", encoding="utf-8")
    ds = load_dataset(data_file, seed=42)
    V, B = ds.vocab.size, ds.block_size
    tc = {"data": str(data_file), "split_seed": 42, "seed": 1337}
    torch.manual_seed(0)
    models = {"bigram": Bigram(BigramConfig(vocab_size=V, block_size=B)),
              "mlp": MLP(MLPConfig(vocab_size=V, block_size=B, n_embd=4, n_hidden=16)),
              "default": MiniGPT(GPTConfig(vocab_size=V, block_size=B, d_model=16, n_heads=2, n_layers=1))}
    models["bigram"].fit(ds.train.x, ds.train.y)
    out = {}
    for name, model in models.items():
        if name != "bigram":
            opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
            for _ in range(30):
                _, loss = model(ds.train.x, ds.train.y)
                opt.zero_grad()
                loss.backward()
                opt.step()
        model.eval()
        with torch.no_grad():
            val = float(model(ds.val.x, ds.val.y)[1])
        out[name] = save_checkpoint(root / "checkpoints" / name, model, ds.vocab, train_config=tc,
                                    metrics={"val_loss": val, "test_loss": val + 0.01})
    return out
