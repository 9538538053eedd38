"""Worked examples on a real pretrained model: each computes its figure on the first GPT-2 folder
``minigpt hf fetch`` keeps (``models/`` in the data folder), when there is one, and says how to get
one when there is none. Nothing about GPT-2's heads, positions or tokens is written down here: it
is all read from the loaded weights when the lesson is shown (the cache keys these examples on the
folders' files, so a fetch computes them again).
"""

from __future__ import annotations

import functools
import math

from minigpt.teaching.examples.registry import example, fmt, table

HOW_TO_GET = ("No GPT-2 folder has been fetched, so there is no real model here to measure. On a "
              "machine with a network, `minigpt hf fetch gpt2` downloads GPT-2 small's four files "
              "(about 550 MB) into the data folder's `models/`; open this lesson again to see {what}, "
              "computed here from its weights.")


@functools.lru_cache(maxsize=1)
def _load(path: str, stamp: tuple):
    from minigpt.pretrained.gpt2 import load_gpt2

    return load_gpt2(path)


def first_fetched(what: str):
    """(the first fetched folder's checkpoint, None), or (None, the Markdown saying why there is
    none: how to get one, or why the folder did not load)."""
    from minigpt.errors import CheckpointError
    from minigpt.pretrained.gpt2 import WEIGHTS_FILE, fetched_folders

    folders = fetched_folders()
    if not folders:
        return None, HOW_TO_GET.format(what=what)
    folder = folders[0]
    try:
        st = (folder / WEIGHTS_FILE).stat()
        return _load(str(folder), (st.st_size, st.st_mtime_ns)), None
    except (CheckpointError, OSError) as e:
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        return None, f"The fetched folder `{folder.name}` could not be loaded: {reason}"


def _markdown_piece(piece: str) -> str:
    """A BPE piece as table text: control characters made visible, Markdown's punctuation escaped
    (a ``|`` piece would otherwise split the cell)."""
    from minigpt.text import printable

    return "".join("\\" + c if c in MARKDOWN_PUNCTUATION else c for c in printable(piece))


MARKDOWN_PUNCTUATION = set("\\`*_{}[]<>()#+-.!|~")


def _name(ckpt) -> str:
    cfg = ckpt.model_config
    return (f"`{ckpt.path.name}` ({cfg.n_layers} layers, {cfg.n_heads} heads, d_model = {cfg.d_model}, "
            f"{ckpt.parameters:,} parameters)")


# --- induction heads (lesson 215) ------------------------------------------------------------------

CHUNK, ROWS, SHOWN_HEADS = 10, 4, 5


@example("pretrained.induction", "The fetched GPT-2's heads, scored as above", reads_models=True)
def _induction() -> str:
    from minigpt.teaching.induction import pretrained_head_scores

    ckpt, missing = first_fetched("every head's previous-token and induction scores")
    if ckpt is None:
        return missing
    scores = pretrained_head_scores(ckpt, CHUNK, ROWS)
    flat = [(float(scores.induction[layer, head]), float(scores.previous[layer, head]), layer, head)
            for layer in range(scores.induction.shape[0]) for head in range(scores.induction.shape[1])]
    by_induction = sorted(flat, reverse=True)[:SHOWN_HEADS]
    by_previous = sorted(flat, key=lambda r: r[1], reverse=True)[:SHOWN_HEADS]
    # A head spreading its weight evenly over the keys a second-copy query sees scores about this.
    uniform = sum(1 / (t + 1) for t in range(CHUNK + 1, 2 * CHUNK + 1)) / CHUNK
    rows = [[f"layer {layer}, head {head}", fmt(ind, 2), fmt(prev, 2)] for ind, prev, layer, head in by_induction]
    prev_rows = [[f"layer {layer}, head {head}", fmt(prev, 2), fmt(ind, 2)] for ind, prev, layer, head in by_previous]
    return (f"{_name(ckpt)}, on {ROWS} rows of {CHUNK} random tokens of its {ckpt.tokenizer.size:,}-token "
            f"vocabulary written twice after its start token (layers and heads counted from 0).\n\n"
            f"The {SHOWN_HEADS} highest induction scores:\n\n"
            + table(["head", "induction", "previous-token"], rows)
            + f"\n\nThe {SHOWN_HEADS} highest previous-token scores:\n\n"
            + table(["head", "previous-token", "induction"], prev_rows)
            + f"\n\nA head spreading its weight evenly would score {fmt(uniform, 2)} on induction. "
              "The trained-heads view (explorers) shows these scores with every head's map.")


# --- positions (lesson 80) -------------------------------------------------------------------------

@example("pretrained.positions", "The fetched GPT-2's learned position table", reads_models=True)
def _positions() -> str:
    from minigpt.teaching.model_views import position_view

    ckpt, missing = first_fetched("its position table's similarities")
    if ckpt is None:
        return missing
    view = position_view(ckpt)
    d = len(view.table[0])
    rows = [[f"{k} apart", fmt(c, 3)] for k, c in view.by_distance]
    last = view.positions[-1]
    return (f"{_name(ckpt)}: {view.total:,} positions × {d} numbers, all learned.\n\n"
            + table(["positions", "mean cosine"], rows)
            + f"\n\n‖p0‖ = {fmt(view.norms[0], 3)}, ‖p{view.positions[1]}‖ = {fmt(view.norms[1], 3)}, "
              f"‖p{last}‖ = {fmt(view.norms[-1], 3)}. The positions explorer (ctrl+l) shows the "
              "similarity of every pair.")


# --- tokenization (lesson 155) ---------------------------------------------------------------------

TOKENS_SENTENCE = "Tokenizers split unbelievably rare words but keep the common ones whole."


@example("pretrained.tokens", "The fetched GPT-2's byte-level BPE on one sentence", reads_models=True)
def _tokens() -> str:
    ckpt, missing = first_fetched("its tokenization of a sentence")
    if ckpt is None:
        return missing
    import textwrap

    from minigpt.text import printable

    tok = ckpt.tokenizer
    ids = tok.encode(TOKENS_SENTENCE)
    lines = textwrap.wrap(" ".join(printable(tok.piece(i)) for i in ids), 72, break_long_words=True)
    pieces = "\n".join(f"    {line}" for line in lines)
    return (f"`{ckpt.path.name}`: {tok.size:,} tokens, {len(tok.ranks):,} merges. The sentence, then its "
            f"tokens (a space between two):\n\n    {TOKENS_SENTENCE}\n{pieces}\n\n"
            f"{len(ids)} tokens for {len(TOKENS_SENTENCE)} characters "
            f"({fmt(len(TOKENS_SENTENCE) / len(ids), 2)} characters a token); ␣ marks a space. "
            "The tokens explorer (ctrl+l) lists each piece's nearest tokens in its embedding.")


# --- sampling (lesson 190) -------------------------------------------------------------------------

SAMPLING_PROMPT = "The capital of France is"
SHOWN_TOKENS = 5


@example("pretrained.sampling", "The fetched GPT-2's next token, at two temperatures", reads_models=True)
def _sampling() -> str:
    import torch

    from minigpt.sampling import next_distribution

    ckpt, missing = first_fetched("its next-token distribution after a prompt")
    if ckpt is None:
        return missing
    tok = ckpt.tokenizer
    warm = next_distribution(ckpt.model, tok, SAMPLING_PROMPT, 1.0, start_token=False)
    cool = torch.softmax(warm.logits / 0.7, -1)
    order = torch.argsort(warm.probs, descending=True)
    rows = [[_markdown_piece(tok.piece(i)), f"{i:,}", fmt(float(warm.probs[i]), 3), fmt(float(cool[i]), 3)]
            for i in order[:SHOWN_TOKENS].tolist()]
    nucleus = int((torch.cumsum(warm.probs[order], 0) < 0.9).sum()) + 1
    entropy = -float((warm.probs * warm.probs.clamp_min(1e-30).log()).sum())
    return (f"`{ckpt.path.name}` after “{SAMPLING_PROMPT}”:\n\n"
            + table(["next token", "id", "T = 1", "T = 0.7"], rows)
            + f"\n\nTop-p = 0.9 keeps the {nucleus:,} most likely of its {tok.size:,} tokens at T = 1; "
              f"the entropy is {fmt(entropy, 2)} nats (ln {tok.size:,} = {fmt(math.log(tok.size), 2)} "
              "for a uniform guess); � is a token holding part of a character's bytes. The playground "
              "continues any prompt with these controls.")


# --- KV memory (lesson 205) ------------------------------------------------------------------------

KV_TOKENS = 16


@example("pretrained.kv_memory", "The fetched GPT-2's cache: the formula and a measurement", reads_models=True)
def _kv_memory() -> str:
    from minigpt.teaching import kv_memory

    ckpt, missing = first_fetched("its cache size per token")
    if ckpt is None:
        return missing
    cfg = ckpt.model_config
    per_token = {b: kv_memory.bytes_per_token(cfg.n_layers, cfg.n_kv_heads, cfg.head_dim, b) for b in (4, 2)}
    measured = kv_memory.measured_cache_bytes(ckpt.model, KV_TOKENS)
    rows = [[name, kv_memory.human_bytes(per_token[b]), kv_memory.human_bytes(per_token[b] * cfg.block_size)]
            for name, b in (("float32", 4), ("bfloat16", 2))]
    return (f"{_name(ckpt)}: 2 · {cfg.n_layers} layers · {cfg.n_kv_heads} key/value heads · "
            f"{cfg.head_dim} numbers a head, per token.\n\n"
            + table(["numbers", "per token", f"full context ({cfg.block_size:,} tokens)"], rows)
            + f"\n\nMeasured: after {KV_TOKENS} tokens in float32 its cache holds {measured:,} bytes; "
              f"the formula gives {per_token[4] * KV_TOKENS:,}.")
