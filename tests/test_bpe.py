"""Our teaching BPE against the ``tokenizers`` package (the oracle) and against hand-worked merges.

Same text, same settings on both sides: the pre-tokenizer is a ``Split`` on our ``PIECE`` regex
(isolated pieces), no special tokens, the same ``vocab_size`` and ``min_frequency``. The texts are
real (the names data and a lesson of this course) and full of ties between equally frequent
pairs, so the tie rule (smallest (left id, right id) wins) is exercised, not only the counts.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from minigpt.teaching.bpe import PIECE, UNKNOWN_ID, merge_pair, pre_tokenize, show_token, train_bpe

tokenizers = pytest.importorskip("tokenizers")
REPO = Path(__file__).resolve().parents[1]


def oracle(text: str, vocab_size: int, min_frequency: int = 2):
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(PIECE), behavior="isolated")
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                  show_progress=False, special_tokens=[])
    tok.train_from_iterator([text], trainer=trainer)
    model = json.loads(tok.to_str())["model"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]
    return tok, model["vocab"], merges


def names_text() -> str:
    return (REPO / "data" / "names.txt").read_text(encoding="utf-8")[:4000]


def lesson_text() -> str:
    return (REPO / "lessons" / "chapters" / "200-kv-cache.md").read_text(encoding="utf-8")


def tied_steps(text: str, merges) -> int:
    """Replay the merges with a plain recount; count the steps where several pairs shared the top."""
    pieces = Counter(pre_tokenize(text))
    words = {p: list(p) for p in pieces}
    ties = 0
    for m in merges:
        pairs = Counter()
        for p, symbols in words.items():
            for pair in zip(symbols, symbols[1:]):
                pairs[pair] += pieces[p]
        top = max(pairs.values())
        assert pairs[(m.left, m.right)] == top == m.count  # the incremental counts are right
        ties += sum(1 for c in pairs.values() if c == top) > 1
        words = {p: merge_pair(s, (m.left, m.right)) for p, s in words.items()}
    return ties


@pytest.mark.parametrize("source", [names_text, lesson_text])
@pytest.mark.parametrize("vocab_size", [40, 120, 300])
def test_merges_vocab_and_encodings_match_tokenizers(source, vocab_size):
    text = source()
    ours = train_bpe(text, vocab_size)
    tok, vocab, merges = oracle(text, vocab_size)
    assert [(m.left, m.right) for m in ours.merges] == merges
    assert ours.vocab == vocab
    assert ours.encode(text) == tok.encode(text).ids
    other = "Grace and Ian read the lesson again: keys, values and 2 caches."
    if all(ch in vocab for ch in other):
        assert ours.encode(other) == tok.encode(other).ids


def test_the_texts_really_have_ties():
    for source in (names_text, lesson_text):
        text = source()
        ours = train_bpe(text, 300)
        assert tied_steps(text, ours.merges) >= 10, source.__name__


def test_pre_tokenization_matches_tokenizers():
    from tokenizers import Regex, pre_tokenizers

    split = pre_tokenizers.Split(Regex(PIECE), behavior="isolated")
    text = "Hi  there, 42 cats!\nok   go."
    assert pre_tokenize(text) == [p for p, _ in split.pre_tokenize_str(text)]
    assert pre_tokenize(text) == ["Hi", "  ", "there", ",", " 42", " cats", "!", "\n", "ok", "   ",
                                  "go", "."]  # a run of spaces keeps all of them


def test_toy_merges_worked_by_hand():
    # pieces: "hug", " hug", " pug", " pun", " bun"; ids: ' '0 b1 g2 h3 n4 p5 u6
    bpe = train_bpe("hug hug pug pun bun", 11)
    steps = [(m.left, m.right, m.count) for m in bpe.merges]
    # (u, g) occurs 3 times: the clear winner
    assert steps[0] == ("u", "g", 3)
    # then (h, ug), (' ', p) and (u, n) all occur twice: (' ', p) has the smallest ids (0, 5)
    assert steps[1] == (" ", "p", 2)
    # left: (h, ug) ids (3, 7) and (u, n) ids (6, 4): h's id is smaller
    assert steps[2] == ("h", "ug", 2)
    assert steps[3] == ("u", "n", 2)
    assert bpe.vocab["ug"] == 7 and bpe.vocab[" p"] == 8
    assert [show_token(t) for t in bpe.tokens("hug pun")] == ["hug", "␣p", "un"]


def test_encode_decode_round_trip_and_unknown_characters():
    bpe = train_bpe("the cat sat on the mat", 20)
    ids = bpe.encode("the mat")
    assert bpe.decode(ids) == "the mat"
    assert bpe.encode("zebra")[0] == UNKNOWN_ID  # 'z' never occurs in the training text
    with pytest.raises(ValueError):
        train_bpe("abc", 0)


def test_merges_are_a_prefix_across_vocabulary_sizes():
    # The explorer trains once and uses the first k merges for a smaller vocabulary.
    text = names_text()
    small, big = train_bpe(text, 60), train_bpe(text, 200)
    assert big.merges[: len(small.merges)] == small.merges
