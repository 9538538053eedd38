"""The explorers on a trained model: what the positions, norms, tokens and scaling explorers show
when a learner loads a checkpoint (the shipped MiniGPT, a run's, a snapshot of it).

Every number is read from the checkpoint's own tensors or measured with a forward pass of its
model on a fixed handful of names, in float64: the learned position table (wpe) and how alike its
rows are, the norms' learned gains and the spread of what each norm receives and gives, the
nearest characters in the learned token embedding, and the spread of q·k at the model's own d_k.
A checkpoint these views cannot describe (another kind of model, one without the tensor a view
reads, a damaged folder) raises CheckpointError with a one-line reason.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from minigpt.errors import CheckpointError

# Names the measured views read (start token + letters), so a view's numbers are reproducible.
PROBE_NAMES = ("emma", "olivia", "ava", "isabella", "sophia", "mia", "charlotte", "amelia",
               "harper", "evelyn", "liam", "noah", "oliver", "elijah", "james", "william")


def load_explorable(path):
    """The checkpoint at ``path`` loaded, if it is a MiniGPT or a GPT-2 folder (``minigpt hf
    fetch``'s); CheckpointError (one line) if not."""
    from minigpt.checkpoint import load_checkpoint
    from minigpt.pretrained.gpt2 import is_pretrained_folder, load_gpt2

    if is_pretrained_folder(path):
        return load_gpt2(path)
    ckpt = load_checkpoint(path)
    if ckpt.kind != "gpt":
        raise CheckpointError(f"{ckpt.path.name} is a {ckpt.kind} model: the explorers look inside a MiniGPT")
    return ckpt


def checkpoint_label(ckpt) -> str:
    """"runs/NAME step 200" for a snapshot, "runs/NAME" for a run's kept model, else the folder."""
    from minigpt.runs.snapshots import run_of_checkpoint

    run = run_of_checkpoint(ckpt.path)
    if run is None:
        return ckpt.path.name
    folder, step = run
    return folder.name + (f" · step {step:,}" if step is not None else "")


def cosine_matrix(rows: torch.Tensor) -> torch.Tensor:
    """Cosine similarity of every row with every row (a zero row is similar to nothing: 0)."""
    unit = F.normalize(rows.double(), dim=1)
    return unit @ unit.T


# -- positions --------------------------------------------------------------------------------------

@dataclass
class PositionView:
    label: str
    learned: bool  # False: a fixed sinusoidal table the model adds, not trained
    table: list[list[float]]  # one row a shown position (``positions``), d values
    similarity: list[list[float]]  # cosine similarity of the shown rows, each with each
    norms: list[float]  # ‖p_i‖ of the shown positions
    by_distance: list[tuple[int, float]]  # (k, mean cosine of positions k apart), over every position
    positions: list[int]  # which positions the rows are: all of them, or an even sample
    total: int  # how many positions the model has


SHOWN_POSITIONS = 32  # a longer table (GPT-2's 1,024) is shown as this many evenly spaced positions


def position_view(ckpt, shown: int = SHOWN_POSITIONS) -> PositionView:
    """The model's position table (``pos_emb.weight``, or its fixed sinusoidal table) and its
    similarity structure; past ``shown`` positions, an even sample of them (first and last
    included) so a screen stays readable. CheckpointError for RoPE or no position encoding."""
    cfg, model = ckpt.model_config, ckpt.model
    kind = getattr(cfg, "pos_encoding", "learned")
    if kind == "learned":
        table = model.pos_emb.weight.detach().double()
    elif kind == "sinusoidal":
        table = model.pos_table.detach().double()
    elif kind == "rope":
        raise CheckpointError("this model uses RoPE: it has no position table, it rotates q and k per position")
    else:
        raise CheckpointError("this model has no position encoding: only the causal mask tells positions apart")
    sim = cosine_matrix(table)
    T = len(table)
    by_distance = [(k, float(torch.diagonal(sim, k).mean())) for k in (1, 2, 4, 8, 16, 32, 128, 512) if k < T]
    positions = list(range(T)) if T <= shown else sorted({round(i * (T - 1) / (shown - 1)) for i in range(shown)})
    rows = torch.tensor(positions)
    return PositionView(checkpoint_label(ckpt), kind == "learned", table[rows].tolist(),
                        sim[rows][:, rows].tolist(), table[rows].norm(dim=1).tolist(), by_distance, positions, T)


# -- norms ------------------------------------------------------------------------------------------

NORM_COLUMNS = ("γ avg", "γ min", "γ max", "β avg", "in", "out")  # in/out: the spread (std or RMS)


@dataclass
class NormView:
    label: str
    kind: str  # "layernorm" | "rmsnorm"
    rows: list[str]  # "1.ln1" (block 1's first norm), …, "ln_f": five characters, a grid's row label
    values: list[list[float]]  # one row per norm, NORM_COLUMNS (β mean is 0 where there is no β)
    names: int  # how many probe names the in/out spreads are measured on


def _norms(model) -> list[tuple[str, torch.nn.Module]]:
    found = []
    for i, block in enumerate(model.blocks):
        found += [(f"{i + 1}.{n}", getattr(block, n)) for n in ("ln1", "ln2") if getattr(block, n, None) is not None]
    return found + [("ln_f", model.ln_f)]


def _spread(x: torch.Tensor, rms: bool) -> torch.Tensor:
    """Each token's spread over its d numbers: the std (LayerNorm's), or the RMS (RMSNorm's)."""
    x = x.double()
    return x.pow(2).mean(-1).sqrt() if rms else x.std(-1, unbiased=False)


def probe_ids(ckpt) -> list[list[int]]:
    """The probe names the model's vocabulary can spell, each as its start token (a character
    model's 0, a pretrained model's ``start_token``) + the name's tokens, cut to its context length."""
    vocab, block, start = ckpt.vocab, ckpt.model_config.block_size, getattr(ckpt, "start_token", 0)
    out = []
    for name in PROBE_NAMES:
        try:
            out.append(([start] + vocab.encode(name))[:block])
        except (KeyError, ValueError):
            continue
    if not out:
        raise CheckpointError("this model's vocabulary spells none of the probe names")
    return out


@torch.no_grad()
def norm_view(ckpt) -> NormView:
    """Each norm's learned gain γ (and shift β) and the spread of what it receives and gives,
    measured token by token on the probe names."""
    model, rms = ckpt.model, ckpt.model_config.norm == "rmsnorm"
    norms = _norms(model)
    seen: dict[str, list[tuple[torch.Tensor, torch.Tensor]]] = {name: [] for name, _ in norms}
    hooks = [module.register_forward_hook(lambda m, a, out, name=name: seen[name].append((a[0], out)))
             for name, module in norms]
    model.eval()
    ids = probe_ids(ckpt)
    try:
        for row in ids:
            model(torch.tensor([row]))
    finally:
        for hook in hooks:
            hook.remove()
    values = []
    for name, module in norms:
        gamma = module.weight.detach().double()
        beta = getattr(module, "bias", None)
        ins = torch.cat([_spread(a[0], rms) for a, _ in seen[name]])
        outs = torch.cat([_spread(o[0], rms) for _, o in seen[name]])
        values.append([float(gamma.mean()), float(gamma.min()), float(gamma.max()),
                       float(beta.detach().double().mean()) if beta is not None else 0.0,
                       float(ins.mean()), float(outs.mean())])
    return NormView(checkpoint_label(ckpt), "rmsnorm" if rms else "layernorm", [n for n, _ in norms],
                    values, len(ids))


# -- tokens -----------------------------------------------------------------------------------------

@dataclass
class TokenView:
    label: str
    chars: list[str]  # the vocabulary, id order
    neighbours: dict[str, list[tuple[str, float]]]  # char → its nearest others by cosine


def token_view(ckpt, k: int = 3) -> TokenView:
    """The model's vocabulary and, for each character, the ``k`` nearest others in its learned
    token embedding (``tok_emb.weight``), by cosine similarity."""
    chars = list(ckpt.vocab.chars)
    sim = cosine_matrix(ckpt.model.tok_emb.weight.detach())
    sim.fill_diagonal_(-2.0)  # a character is not its own neighbour
    top = sim.topk(min(k, len(chars) - 1), dim=1)
    neighbours = {c: [(chars[j], float(v)) for v, j in zip(top.values[i], top.indices[i].tolist())]
                  for i, c in enumerate(chars)}
    return TokenView(checkpoint_label(ckpt), chars, neighbours)


# Each loaded model's unit-length token embedding, kept while the model lives: GPT-2's is
# 50,257 × 768 floats (150 MB, a fraction of a second to build), and the tokens explorer asks for
# it on every edit of the text. Stamped with the tensor's version so a weight changed in place
# (a model still training) is normalised again.
_UNIT_EMBEDDINGS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@torch.no_grad()
def unit_embedding(model) -> torch.Tensor:
    """``model``'s token embedding with every row scaled to length 1 (float32), built once per model."""
    weight = model.tok_emb.weight
    stamp = (weight.data_ptr(), weight._version)
    kept = _UNIT_EMBEDDINGS.get(model)
    if kept is None or kept[0] != stamp:
        kept = _UNIT_EMBEDDINGS[model] = (stamp, F.normalize(weight.detach().float(), dim=1))
    return kept[1]


@torch.no_grad()
def nearest_tokens(ckpt, text: str, k: int = 5, limit: int = 64) -> list[tuple[str, list[tuple[str, float]]]]:
    """Each token of ``text`` (a pretrained model's BPE pieces) with the ``k`` nearest other tokens
    in its embedding by cosine similarity: one row of similarities per typed token, never the
    whole vocabulary squared (GPT-2's 50,257² would be 20 GB); the first ``limit`` tokens."""
    tokenizer = ckpt.tokenizer
    ids = tokenizer.encode(text)
    if not ids:
        raise ValueError("type a word or a sentence to find its tokens' neighbours")
    unit = unit_embedding(ckpt.model)
    out = []
    for i in ids[:limit]:
        sims = unit @ unit[i]
        sims[i] = -2.0  # a token is not its own neighbour
        top = sims.topk(min(k, len(sims) - 1))
        out.append((tokenizer.piece(i), [(tokenizer.piece(j), float(v)) for v, j in zip(top.values, top.indices.tolist())]))
    return out


def encode_known(view: TokenView, text: str) -> list[tuple[str, int | None]]:
    """Each character of ``text`` (lower-cased, as the names were) with its id, None if the model
    never saw it."""
    index = {c: i for i, c in enumerate(view.chars)}
    return [(c, index.get(c)) for c in text.lower()]


# -- scaling ----------------------------------------------------------------------------------------

@dataclass
class ScalingView:
    label: str
    d_k: int
    std_raw: float  # of q·k over every (layer, head, query, visible key)
    std_scaled: float  # of q·k / √d_k: what the model's softmax reads
    max_weight_raw: float  # mean largest softmax weight per query (queries seeing ≥ 2 keys)
    max_weight_scaled: float
    entropy_raw: float  # mean entropy in nats of the same rows
    entropy_scaled: float
    scores: int  # how many q·k went into the spreads


@torch.no_grad()
def scaling_view(ckpt) -> ScalingView:
    """The scaling demo's numbers measured on the model's own queries and keys: every layer's q·k
    on the probe names (after its QK-norm and RoPE, where it has them), with and without ÷√d_k."""
    import math

    from minigpt.models.gpt import apply_rope

    model = ckpt.model
    layers = [block.attn for block in model.blocks]
    seen: list[tuple[object, torch.Tensor, object]] = []
    hooks = [a.register_forward_pre_hook(lambda m, args, attn=a: seen.append((attn, args[0], args[1])))
             for a in layers]
    model.eval()
    try:
        for row in probe_ids(ckpt):
            model(torch.tensor([row]))
    finally:
        for hook in hooks:
            hook.remove()
    raw_scores, rows_raw, rows_scaled = [], [], []
    d_k = layers[0].head_dim
    for attn, x, rope in seen:
        B, T, C = x.shape
        q, k, _ = attn.qkv(x).split((C, attn.kv_dim, attn.kv_dim), dim=2)
        q = q.view(B, T, attn.n_heads, d_k).transpose(1, 2)
        k = k.view(B, T, attn.n_kv_heads, d_k).transpose(1, 2)
        if attn.q_norm is not None:
            q, k = attn.q_norm(q), attn.k_norm(k)
        if attn.rope:
            q, k = apply_rope(q, *rope), apply_rope(k, *rope)
        k = k.repeat_interleave(attn.n_heads // attn.n_kv_heads, dim=1)
        s = (q.double() @ k.double().transpose(-2, -1))[0]  # (H, T, T)
        visible = torch.ones(T, T, dtype=torch.bool).tril()
        raw_scores.append(s[:, visible])
        for t in range(1, T):  # query t sees keys 0..t: at least two
            rows_raw.append(s[:, t, :t + 1])
            rows_scaled.append(s[:, t, :t + 1] / math.sqrt(d_k))
    raw = torch.cat([r.flatten() for r in raw_scores])

    def weights_stats(rows):
        tops, ents = [], []
        for r in rows:
            w = r.softmax(-1)
            tops.append(w.max(-1).values)
            ents.append(-(w * w.clamp_min(1e-300).log()).sum(-1))
        return float(torch.cat(tops).mean()), float(torch.cat(ents).mean())

    mr, er = weights_stats(rows_raw)
    ms, es = weights_stats(rows_scaled)
    return ScalingView(checkpoint_label(ckpt), d_k, float(raw.std()), float(raw.std() / math.sqrt(d_k)),
                       mr, ms, er, es, raw.numel())
