"""The two reference trainers that ``bench.py`` measures ours against, on the same model size.

- The course-style reference: one module per head run in a Python loop, an explicit causal mask,
  loss over whole padded blocks, batch 32, plain AdamW.
- The makemore-style reference: makemore's own Transformer and loop as it trains (one fused q/k/v
  projection, the masked softmax written out, GELU's tanh formula in elementwise ops, a loader
  that encodes 32 random names per step, AdamW with lr 5e-4, weight decay 0.01, betas 0.9/0.99).
  makemore's loader runs 4 worker processes; here it runs in the training process, since on two
  cores extra processes would only slow the reference down.

Both count real (non-padding) target characters per second, after 3 untimed warm-up steps.
"""

from __future__ import annotations

import math
import time

import torch
from torch import nn
from torch.nn import functional as F

from minigpt.data import IGNORE, EncodedSplit


class OneHead(nn.Module):
    """A single attention head with its own three projections, masking by hand."""

    def __init__(self, width, head_width, longest):
        super().__init__()
        self.to_q = nn.Linear(width, head_width, bias=False)
        self.to_k = nn.Linear(width, head_width, bias=False)
        self.to_v = nn.Linear(width, head_width, bias=False)
        self.register_buffer("allowed", torch.ones(longest, longest).tril().bool())

    def forward(self, h):
        n = h.shape[1]
        q, k, v = self.to_q(h), self.to_k(h), self.to_v(h)
        scores = torch.einsum("bid,bjd->bij", q, k) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(~self.allowed[:n, :n], float("-inf"))
        return scores.softmax(dim=-1) @ v


class HeadsInALoop(nn.Module):
    """Multi-head attention as a Python list of heads, run one after another."""

    def __init__(self, width, n_heads, longest):
        super().__init__()
        self.heads = nn.ModuleList(OneHead(width, width // n_heads, longest) for _ in range(n_heads))
        self.mix = nn.Linear(width, width)

    def forward(self, h):
        outputs = []
        for head in self.heads:
            outputs.append(head(h))
        return self.mix(torch.cat(outputs, dim=-1))


class RefBlock(nn.Module):
    def __init__(self, width, n_heads, longest):
        super().__init__()
        self.norm_a, self.norm_b = nn.LayerNorm(width), nn.LayerNorm(width)
        self.attend = HeadsInALoop(width, n_heads, longest)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, h):
        h = h + self.attend(self.norm_a(h))
        return h + self.mlp(self.norm_b(h))


class RefGPT(nn.Module):
    def __init__(self, vocab_size, longest, width=64, n_heads=4, n_layers=4):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, width)
        self.pos = nn.Embedding(longest, width)
        self.blocks = nn.Sequential(*(RefBlock(width, n_heads, longest) for _ in range(n_layers)))
        self.norm = nn.LayerNorm(width)
        self.out = nn.Linear(width, vocab_size, bias=False)

    def forward(self, idx, targets):
        where = torch.arange(idx.shape[1])
        h = self.tok(idx) + self.pos(where)
        logits = self.out(self.norm(self.blocks(h)))
        # one loss term per position, padding skipped: the fair comparison for whole names
        per_position = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE)
        return logits, per_position


def course_tokens_per_s(split: EncodedSplit, vocab_size: int, block: int, seconds: float) -> tuple[float, int]:
    torch.manual_seed(0)
    model = RefGPT(vocab_size, block)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step() -> int:
        ix = torch.randint(len(split), (32,))
        x, y = split.x[ix], split.y[ix]  # the whole block, padding included
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return int((y != IGNORE).sum())

    return steady_tokens_per_s(step, seconds), sum(p.numel() for p in model.parameters())


def steady_tokens_per_s(step, seconds: float) -> float:
    """Real tokens per second of ``step()`` (which returns its real tokens), after 3 warm-up steps."""
    for _ in range(3):
        step()
    tokens, steps, t0 = 0, 0, time.perf_counter()
    while steps < 10 or time.perf_counter() - t0 < seconds:
        tokens += step()
        steps += 1
    return tokens / (time.perf_counter() - t0)


# ----------------------------------------------------------------------------- the makemore-style reference


def tanh_gelu(x):
    """GELU's tanh approximation as separate elementwise operations (each one a kernel)."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3.0))))


class FusedProjectionAttention(nn.Module):
    """q, k and v of every head from one linear layer; the causal softmax written out, no SDPA."""

    def __init__(self, width, n_heads, longest):
        super().__init__()
        self.n_heads = n_heads
        self.to_qkv = nn.Linear(width, 3 * width)
        self.mix = nn.Linear(width, width)
        self.register_buffer("allowed", torch.ones(longest, longest).tril().view(1, 1, longest, longest))

    def forward(self, h):
        b, n, width = h.shape
        q, k, v = (t.view(b, n, self.n_heads, width // self.n_heads).transpose(1, 2)
                   for t in self.to_qkv(h).split(width, dim=2))
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.shape[-1]))
        scores = scores.masked_fill(self.allowed[:, :, :n, :n] == 0, float("-inf"))
        mixed = scores.softmax(dim=-1) @ v
        return self.mix(mixed.transpose(1, 2).contiguous().view(b, n, width))


class MakemoreStyleBlock(nn.Module):
    def __init__(self, width, n_heads, longest):
        super().__init__()
        self.norm_a, self.norm_b = nn.LayerNorm(width), nn.LayerNorm(width)
        self.attend = FusedProjectionAttention(width, n_heads, longest)
        self.widen, self.narrow = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

    def forward(self, h):
        h = h + self.attend(self.norm_a(h))
        return h + self.narrow(tanh_gelu(self.widen(self.norm_b(h))))


class MakemoreStyleGPT(nn.Module):
    def __init__(self, vocab_size, longest, width=64, n_heads=4, n_layers=4):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, width)
        self.pos = nn.Embedding(longest, width)
        self.blocks = nn.ModuleList(MakemoreStyleBlock(width, n_heads, longest) for _ in range(n_layers))
        self.norm = nn.LayerNorm(width)
        self.out = nn.Linear(width, vocab_size, bias=False)

    def forward(self, idx, targets=None):
        h = self.tok(idx) + self.pos(torch.arange(idx.shape[1], dtype=torch.long).unsqueeze(0))
        for block in self.blocks:
            h = block(h)
        logits = self.out(self.norm(h))
        if targets is None:  # scoring with our own evaluate(), which computes the loss itself
            return logits, None
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=IGNORE)


class NamesOneAtATime(torch.utils.data.Dataset):
    """Each item encoded when it is asked for: the start token, the name, then padding."""

    def __init__(self, words: list[str], stoi: dict[str, int], block: int):
        self.words, self.stoi, self.block = words, stoi, block

    def __len__(self) -> int:
        return len(self.words)

    def __getitem__(self, i):
        ids = torch.tensor([self.stoi[c] for c in self.words[i]], dtype=torch.long)[: self.block - 1]
        x = torch.zeros(self.block, dtype=torch.long)
        y = torch.full((self.block,), IGNORE, dtype=torch.long)
        x[1 : 1 + len(ids)] = ids
        y[: len(ids)] = ids
        y[len(ids)] = 0  # the end of the name is a target too
        return x, y


class MakemoreLoop:
    """makemore's training loop as it runs by default: 32 random names a step through its loader,
    AdamW (lr 5e-4, weight decay 0.01, betas 0.9/0.99), no schedule, no clipping. ``step()`` can
    be called in slices (the race interleaves it with our runs) and returns the real tokens."""

    def __init__(self, words: list[str], stoi: dict[str, int], block: int, seed: int = 0):
        torch.manual_seed(seed)
        self.model = MakemoreStyleGPT(len(stoi), block)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=5e-4, weight_decay=0.01, betas=(0.9, 0.99),
                                     eps=1e-8)
        names = NamesOneAtATime(words, stoi, block)
        sampler = torch.utils.data.RandomSampler(names, replacement=True, num_samples=10**9)
        self.batches = iter(torch.utils.data.DataLoader(names, batch_size=32, sampler=sampler))
        self.steps = 0
        self.seconds = 0.0  # time spent in steps only

    @property
    def n_params(self) -> int:
        return sum(p.numel() for p in self.model.parameters())

    def step(self) -> int:
        x, y = next(self.batches)
        _, loss = self.model(x, y)
        self.model.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.steps += 1
        return int((y != IGNORE).sum())

    def train_for(self, seconds: float) -> None:
        """Train until ``seconds`` more of step time have been spent."""
        self.model.train()
        end = self.seconds + seconds
        while self.seconds < end:
            t = time.perf_counter()
            self.step()
            self.seconds += time.perf_counter() - t


def makemore_tokens_per_s(words: list[str], stoi: dict[str, int], block: int, seconds: float) -> tuple[float, int]:
    loop = MakemoreLoop(words, stoi, block)
    return steady_tokens_per_s(loop.step, seconds), loop.n_params
