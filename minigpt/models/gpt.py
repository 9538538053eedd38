"""MiniGPT: a small decoder-only Transformer, read top to bottom.

token embedding (+ learned or sinusoidal positions)
  → N × [LayerNorm → causal multi-head self-attention (optionally grouped-query) → +residual,
         LayerNorm → GELU feed-forward (4×) → +residual]      (pre-norm blocks)
  → final LayerNorm → linear head over the vocabulary.
(``attention_only`` drops the feed-forward half of every block: the induction-head lesson's model.)

That is the course's architecture and the default. The config can swap in the later variants
measured for the training recipe: RMSNorm, a SwiGLU or ReLU² feed-forward, RoPE or no positions at
all, QK-norm, no biases; and the modded-nanogpt speedrun's tricks (minigpt/models/speedrun.py):
an exact bigram table, smear, value residual, the x0 shortcut, logit soft-capping, zero-initialised
output projections and multi-token prediction.

Attention uses one fused projection for Q, K and V and ``F.scaled_dot_product_attention`` (the
fused kernel on GPU). For generation, each attention layer can keep a KV cache so a new token
attends to the stored keys and values instead of recomputing the whole prefix.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.checkpoint import checkpoint

from minigpt.models import mup
from minigpt.models.config import GPTConfig
from minigpt.models.loss import next_token_loss, z_loss
from minigpt.models.speedrun import (
    BigramTable,
    KVCache,  # one (k, v) pair per layer, each (B, n_kv_heads, T_so_far, head_dim)
    Smear,
    after_next_loss,
    previous_tokens,
    remember_last,
    softcap,
)


def sinusoidal_table(T: int, d: int) -> torch.Tensor:
    pos = torch.arange(T, dtype=torch.float32)[:, None]
    angle = pos / 10000 ** (torch.arange(0, d, 2, dtype=torch.float32) / d)
    pe = torch.zeros(T, d)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angle), torch.cos(angle)
    return pe


def rope_tables(T: int, head_dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    theta = 10000 ** (-torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    ang = torch.arange(T, dtype=torch.float32)[:, None] * theta[None, :]  # (T, head_dim/2)
    return torch.cos(ang), torch.sin(ang)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate each (even, odd) pair of x (B, H, T, hd) by its position's angle."""
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1)
    return out.flatten(-2)


def word_mask(segments: torch.Tensor) -> torch.Tensor:
    """(B, T) word ids of packed rows → (B, 1, T, T) mask: True where query i may see key j.

    Causal (j ≤ i) and within the same word: a block of causal triangles along the diagonal.
    Padding (-1) only sees earlier padding, which keeps every row of the softmax defined.
    """
    T = segments.shape[1]
    causal = torch.ones(T, T, dtype=torch.bool, device=segments.device).tril()
    return ((segments[:, :, None] == segments[:, None, :]) & causal)[:, None]


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.n_heads, self.head_dim = cfg.n_heads, cfg.head_dim
        self.n_kv_heads, self.kv_dim = cfg.n_kv_heads, cfg.kv_dim
        # fused W_Q|W_K|W_V; with grouped-query attention K and V are narrower (kv_dim columns)
        self.qkv = nn.Linear(cfg.d_model, cfg.d_model + 2 * cfg.kv_dim, bias=cfg.bias)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model, bias=cfg.bias)  # W_O
        self.dropout = cfg.dropout
        self.resid_drop = nn.Dropout(cfg.dropout)
        self.rope = cfg.pos_encoding == "rope"
        self.scale = cfg.attention_scale  # 1/√head_dim, or μP's 1/head_dim
        # QK-norm: queries and keys at unit RMS per head (with a learned gain), so their dot
        # products cannot grow without bound as training sharpens attention.
        self.q_norm = nn.RMSNorm(cfg.head_dim) if cfg.qk_norm else None
        self.k_norm = nn.RMSNorm(cfg.head_dim) if cfg.qk_norm else None

    def forward(self, x, rope=None, cache=None, return_weights: bool = False, mask=None, first_values=None):
        """→ (output, attention weights or None, this layer's values for the new tokens).

        ``first_values`` = (v₁, λ): value residual. The values become (1 − λ)·v + λ·v₁, the first
        layer's values for the same tokens, so every layer can still read the tokens' own content
        however much the residual stream has mixed them (mixed before the cache stores them).
        """
        B, T, C = x.shape
        q, k, v = self.qkv(x).split((C, self.kv_dim, self.kv_dim), dim=2)
        # (B, T, C) -> (B, H, T, hd): splitting into heads is only a reshape
        q = q.view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        k, v = (t.view(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2) for t in (k, v))
        if first_values is not None:
            v1, lam = first_values
            v = (1 - lam) * v + lam * v1
        values = v
        if self.q_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        if self.rope:
            q, k = apply_rope(q, *rope), apply_rope(k, *rope)
        if cache is not None:
            if cache[0] is not None:
                k = torch.cat((cache[0], k), dim=2)
                v = torch.cat((cache[1], v), dim=2)
            cache[0], cache[1] = k, v  # stored once per key/value head: GQA's memory saving
        if self.n_kv_heads != self.n_heads:
            # each group of n_heads / n_kv_heads query heads reads the same key/value head
            group = self.n_heads // self.n_kv_heads
            k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        if return_weights:
            att = (q @ k.transpose(-2, -1)) * self.scale
            S = k.shape[2]
            mask = torch.ones(T, S, dtype=torch.bool, device=x.device).tril(S - T)
            weights = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
            y = weights @ v
        else:
            weights = None
            # With a cache and a single new token, that token may see every stored key, so no
            # mask is needed; a multi-token step with a cache only happens at the start (empty).
            # ``mask`` (packed words): causal within each word, nothing across words.
            y = F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, is_causal=mask is None and T > 1,
                dropout_p=self.dropout if self.training else 0.0, scale=self.scale,
            )
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # concatenate the heads
        return self.resid_drop(self.proj(y)), weights, values


class FeedForward(nn.Module):
    """Position-wise: widen, a nonlinearity, narrow back. SwiGLU's ``up`` makes two halves, a
    gate (through SiLU) and a value, multiplied together."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.kind, hidden = cfg.ffn, cfg.ffn_hidden
        self.up = nn.Linear(cfg.d_model, (2 if self.kind == "swiglu" else 1) * hidden, bias=cfg.bias)
        self.down = nn.Linear(hidden, cfg.d_model, bias=cfg.bias)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x):
        h = self.up(x)
        if self.kind == "swiglu":
            gate, value = h.chunk(2, dim=-1)
            h = F.silu(gate) * value
        elif self.kind == "relu2":
            h = F.relu(h).square()
        elif self.kind == "gelu_tanh":
            h = F.gelu(h, approximate="tanh")
        else:
            h = F.gelu(h)
        return self.drop(self.down(h))


def make_norm(cfg: GPTConfig) -> nn.Module:
    if cfg.norm == "rmsnorm":
        return nn.RMSNorm(cfg.d_model)
    return nn.LayerNorm(cfg.d_model, eps=cfg.norm_eps, bias=cfg.bias)


class Block(nn.Module):
    """Pre-norm: normalise the input of each sub-layer, add its output to the residual stream."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.ln1 = make_norm(cfg)
        self.attn = CausalSelfAttention(cfg)
        # attention-only blocks have no second sub-layer at all (no parameters to count or train)
        self.ln2 = None if cfg.attention_only else make_norm(cfg)
        self.ffn = None if cfg.attention_only else FeedForward(cfg)

    def forward(self, x, rope=None, cache=None, return_weights=False, mask=None, first_values=None):
        a, w, values = self.attn(self.ln1(x), rope, cache, return_weights, mask, first_values)
        x = x + a
        if self.ffn is not None:
            x = x + self.ffn(self.ln2(x))
        return x, w, values


class MiniGPT(nn.Module):
    kind = "gpt"

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.config = cfg
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        if cfg.pos_encoding == "learned":
            self.pos_emb = nn.Embedding(cfg.block_size, cfg.d_model)
        elif cfg.pos_encoding == "sinusoidal":
            self.register_buffer("pos_table", sinusoidal_table(cfg.block_size, cfg.d_model), persistent=False)
        elif cfg.pos_encoding == "rope":
            cos, sin = rope_tables(cfg.block_size, cfg.head_dim)
            self.register_buffer("rope_cos", cos, persistent=False)
            self.register_buffer("rope_sin", sin, persistent=False)
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.ln_f = make_norm(cfg)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        if cfg.tie_weights:
            self.head.weight = self.tok_emb.weight
        self.add_speedrun_parts(cfg)
        self.apply(self._init_weights)
        # GPT-2's trick: shrink the projections that write into the residual stream by 1/√(2L)
        # so the stream's variance does not grow with depth. Zero-init goes further: each block
        # starts as the identity (its output adds nothing) and the head predicts uniformly, so
        # the first steps grow only what the loss asks for.
        for name, p in self.named_parameters():
            if name.endswith(("attn.proj.weight", "ffn.down.weight")):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * cfg.n_layers))
            if cfg.zero_init and name.endswith(("attn.proj.weight", "ffn.down.weight", "head.weight")):
                nn.init.zeros_(p)  # (a head tied to the embedding is not listed: it is tok_emb.weight)
        for table in (self.bigram_table, self.bigram_logits):  # learn only what the pairs add
            if table is not None:
                nn.init.zeros_(table.table.weight if isinstance(table, BigramTable) else table.weight)
        mup.apply_init(self, cfg)
        self.output_mult = mup.output_multiplier(cfg)

    def add_speedrun_parts(self, cfg: GPTConfig) -> None:
        """The speedrun's tricks that own parameters (absent when off, so a default model's
        weights file is unchanged). One learned scalar per block for each per-block trick."""
        L = cfg.n_layers
        self.bigram_table = BigramTable(cfg.vocab_size, cfg.d_model) if cfg.bigram == "residual" else None
        self.bigram_lambdas = nn.Parameter(torch.ones(L)) if cfg.bigram == "residual" else None
        self.bigram_logits = nn.Embedding(cfg.vocab_size, cfg.vocab_size) if cfg.bigram == "logits" else None
        self.smear = Smear(cfg.d_model) if cfg.smear else None
        # x0 shortcut: block i reads x + λᵢ·x0, λ from 0 (the speedrun's embedding skip)
        self.x0_lambdas = nn.Parameter(torch.zeros(L)) if cfg.x0_shortcut else None
        # value residual: layer i > 0 mixes λᵢ of the first layer's values into its own, λ from ½
        self.value_lambdas = nn.Parameter(torch.full((L,), 0.5)) if cfg.value_residual else None
        self.mtp_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False) if cfg.mtp_weight > 0 else None

    @staticmethod
    def _init_weights(m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)

    def new_cache(self) -> KVCache:
        return KVCache([None, None] for _ in self.blocks)

    def forward(self, idx, targets=None, *, cache: KVCache | None = None, start: int = 0,
                last_only: bool = False, positions: torch.Tensor | None = None,
                segments: torch.Tensor | None = None):
        """idx (B, T) → (logits (B, T, V), mean loss over non-padding targets or None).

        The one return shape of every model, whatever the options. With ``cache`` the tokens are
        taken to sit at positions start … start+T-1 and the layers' keys and values are appended
        to the cache (``new_cache``). ``last_only`` computes the head for the last position only
        (all that sampling needs). Packed rows (training) pass ``positions`` (each token's
        position in its own word) and ``segments`` (which word it is in; ``word_mask`` builds the
        mask): attention then stays inside each word, so a packed row computes what separate
        rows would. The attention weights have their own entry point, ``attention_maps``.
        """
        logits, loss, _ = self._run(idx, targets, cache=cache, start=start, last_only=last_only,
                                    positions=positions, segments=segments, keep_weights=False)
        return logits, loss

    def _run(self, idx, targets, *, cache, start, last_only, positions, segments, keep_weights):
        _B, T = idx.shape
        if start + T > self.config.block_size:
            raise ValueError(f"sequence of {start + T} exceeds the model's block size {self.config.block_size}")
        if positions is None:
            positions = torch.arange(start, start + T, device=idx.device)
        mask = None if segments is None else word_mask(segments)
        x = self.tok_emb(idx)
        rope = None
        if self.config.pos_encoding == "learned":
            x = x + self.pos_emb(positions)
        elif self.config.pos_encoding == "sinusoidal":
            x = x + self.pos_table[positions]
        elif self.config.pos_encoding == "rope":
            cos, sin = self.rope_cos[positions], self.rope_sin[positions]
            # per-row positions (B, T, hd/2) broadcast over the heads
            rope = (cos[:, None], sin[:, None]) if positions.dim() == 2 else (cos, sin)
        cfg = self.config
        prev = previous_tokens(idx, positions, cache, cfg.vocab_size) if self.bigram_table is not None else None
        if self.smear is not None:
            emb, x = x, self.smear(x, positions, cache)
            remember_last(cache, idx, emb)
        elif cache is not None:
            remember_last(cache, idx, x)
        pairs = self.bigram_table(idx, prev) if prev is not None else None
        x = self.drop(x)
        x0, first_values, weights = x, None, []
        # Checkpointing only pays while gradients are kept: generation and evaluation run as usual.
        recompute = cfg.checkpoint_activations and torch.is_grad_enabled() and cache is None
        for i, block in enumerate(self.blocks):
            if self.x0_lambdas is not None:
                x = x + self.x0_lambdas[i] * x0
            if pairs is not None:
                x = x + self.bigram_lambdas[i] * pairs
            mix = (first_values, self.value_lambdas[i]) if first_values is not None else None
            if recompute and not keep_weights:
                x, w, values = checkpoint(block, x, rope, None, False, mask, mix, use_reentrant=False)
            else:
                x, w, values = block(x, rope, None if cache is None else cache[i], keep_weights, mask, mix)
            if i == 0 and self.value_lambdas is not None:
                first_values = values
            weights.append(w)
        x = self.ln_f(x)
        if last_only:
            x, idx = x[:, -1:, :], idx[:, -1:]
        logits = self.head(x)
        if self.output_mult != 1.0:
            logits = logits * self.output_mult
        if self.bigram_logits is not None:
            logits = logits + self.bigram_logits(idx)  # the current character's bigram logits
        logits = softcap(logits, cfg.softcap)
        loss = next_token_loss(logits, targets)
        if loss is not None and cfg.z_loss > 0 and self.training:  # trains only, like the MTP loss
            loss = loss + cfg.z_loss * z_loss(logits, targets)
        if loss is not None and self.mtp_head is not None and self.training:
            # The auxiliary loss trains only: evaluation and the logged val/test losses are next-token.
            after_next = softcap(self.mtp_head(x) * self.output_mult, cfg.softcap)
            loss = loss + cfg.mtp_weight * after_next_loss(after_next, targets, segments)
        return logits, loss, weights

    @torch.no_grad()
    def attention_maps(self, idx) -> torch.Tensor:
        """(n_layers, n_heads, T, T) attention weights for one sequence idx (1, T)."""
        was_training = self.training
        self.eval()
        _, _, weights = self._run(idx, None, cache=None, start=0, last_only=False, positions=None,
                                  segments=None, keep_weights=True)
        self.train(was_training)
        return torch.stack([w[0] for w in weights])
