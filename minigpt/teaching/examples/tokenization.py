"""Worked examples for "Tokenization and BPE": merges by hand, on the names, on a lesson."""

from __future__ import annotations

from functools import lru_cache

from minigpt.teaching.bpe import BPE, pre_tokenize, show_token, train_bpe
from minigpt.teaching.examples.registry import count, example, table

TOY_TEXT = "hug hug pug pun bun"
NAMES_MERGES = 12
# The names file lists the most common names first; the first 8,000 keep training under a
# second, so the lesson opens without a wait.
NAMES_SAMPLE = 8000


@lru_cache(maxsize=1)
def names_text() -> str:
    from minigpt.data import load_words

    return "\n".join(load_words()[:NAMES_SAMPLE])


@lru_cache(maxsize=1)
def names_bpe() -> BPE:
    """BPE trained on all the names with 100 merges (smaller vocabularies are its prefixes)."""
    text = names_text()
    return train_bpe(text, len(set(text)) + 100)


@lru_cache(maxsize=1)
def lessons_text() -> str:
    """The prose of every lesson of this course, concatenated."""
    from minigpt.lessons import load_lessons

    return "\n\n".join(b.text for lesson in load_lessons() for b in lesson.blocks()
                        if b.kind == "markdown")


EXPLORER_MERGES = (0, 50, 150, 400)  # the explorer's vocabulary sizes: alphabet + these merges


@lru_cache(maxsize=1)
def explorer_bpe() -> BPE:
    """The tokens explorer's tokenizer: trained on the names and the lessons' prose together."""
    corpus = names_text() + "\n\n" + lessons_text()
    return train_bpe(corpus, len(set(corpus)) + EXPLORER_MERGES[-1])


def lesson_paragraph() -> str:
    """The opening paragraph of the KV-cache lesson: real prose of this course."""
    from minigpt.lessons import lesson_by_id

    body = lesson_by_id("kv-cache").body
    return body.split("\n\n")[1].strip()


def _token_list(tokens: list[str], limit: int = 60) -> str:
    """Tokens separated by · (a | would split a Markdown table cell), cut near ``limit``."""
    out = []
    for t in tokens:
        if sum(len(p) + 1 for p in out) + len(show_token(t)) > limit:
            return "·".join(out) + "…"
        out.append(show_token(t))
    return "·".join(out)


@example("tokens.bpe_toy", "BPE by hand on “hug hug pug pun bun”")
def _toy() -> str:
    bpe = train_bpe(TOY_TEXT, 11)
    start = sorted({ch for ch in TOY_TEXT})
    rows = []
    for n, m in enumerate(bpe.merges, 1):
        partial = BPE(bpe.vocab, bpe.merges[:n])
        rows.append([n, f"{show_token(m.left)} + {show_token(m.right)}", m.count,
                     show_token(m.token), bpe.vocab[m.token], _token_list(partial.tokens(TOY_TEXT), 30)])
    pieces = " ".join(f"“{show_token(p)}”" for p in pre_tokenize(TOY_TEXT))
    return (f"Pieces: {pieces}. Starting tokens, ids in code-point order: "
            + ", ".join(f"{show_token(c)}={i}" for i, c in enumerate(start)) + ".\n\n"
            + table(["#", "pair", "count", "new", "id", "the text after"], rows)
            + "\n\nMerge 2 is a three-way tie at count 2 between ␣+p (ids 0, 5), h+ug (3, 7) "
              "and u+n (6, 4): the pair with the smallest ids wins, then h+ug beats u+n.")


@example("tokens.names_merges", f"The first {NAMES_MERGES} merges learned on the names")
def _names() -> str:
    text = names_text()
    bpe = names_bpe().truncated(NAMES_MERGES)
    base = len(set(text))
    rows = [[n, f"{m.left} + {m.right}", count(m.count), m.token]
            for n, m in enumerate(bpe.merges, 1)]
    words = text.split("\n")
    sample = [w for w in words if len(w) >= 7][:3]
    shown = "; ".join(_token_list(bpe.tokens(w), 30) for w in sample)
    return (f"The {count(len(words))} most common names of the data set, {base} distinct "
            f"characters (the newline between names included).\n\n" + table(["#", "pair", "count", "new token"], rows)
            + f"\n\nWith these {NAMES_MERGES} merges: {shown}")


@example("tokens.paragraph", "A paragraph of this course at four vocabulary sizes")
def _paragraph() -> str:
    corpus = lessons_text()
    alphabet = len(set(corpus))
    full = train_bpe(corpus, alphabet + 800)
    text = lesson_paragraph()
    first_line = text.split("\n")[0][:44]
    rows = []
    for extra in (0, 50, 200, 800):
        bpe = full.truncated(extra)
        n = len(bpe.tokens(text))
        rows.append([len(bpe.vocab), count(n), f"{len(text) / n:.2f}",
                     _token_list(bpe.tokens(first_line), 40)])
    return (f"Trained on the prose of every lesson ({count(len(corpus))} characters, {alphabet} "
            f"distinct), then applied to the first paragraph of the KV-cache lesson "
            f"({count(len(text))} characters):\n\n"
            + table(["vocab", "tokens", "chars/token", "start of the paragraph"], rows)
            + "\n\nMore merges: fewer, longer tokens, and whole common words (with their "
              "leading space) become single tokens.")


@example("tokens.cost", "Vocabulary size against embedding size and sequence length")
def _cost() -> str:
    from minigpt.teaching.params import gpt_total
    from minigpt.teaching.shipped import shipped_model

    ours_cfg = shipped_model().config
    ours, d = gpt_total(ours_cfg), ours_cfg.d_model  # our MiniGPT's width
    words = names_text().split("\n")
    full = names_bpe()
    rows = []
    for extra in (0, 25, 100):
        bpe = full.truncated(extra)
        tokens = sum(len(bpe.tokens(w)) for w in words) + len(words)  # + one end marker each
        V = len(bpe.vocab)
        rows.append([V, f"{tokens / len(words):.2f}", count(2 * V * d), count(2 * V * 768)])
    for V in (256, 50257):
        rows.append([f"{V:,}", "—", count(2 * V * d), count(2 * V * 768)])
    return (table(["vocab V", "tokens/name", f"2·V·d, d={d}", "2·V·d, d=768"], rows)
            + f"\n\n2·V·d counts the token embedding and an untied output head. Our whole "
              f"MiniGPT has {count(ours)} parameters: a GPT-2 sized vocabulary (50,257) at d = {d} "
              f"would need {count(2 * 50257 * d)} for those two matrices alone.")
