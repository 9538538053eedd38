"""Byte-pair encoding, small enough to read: train merges on a text, then encode with them.

It follows the ``tokenizers`` package's BPE trainer (tests/test_bpe.py uses it as the oracle) so
that the merges shown in the lessons are the ones a production library would learn:

- **Pre-tokenization.** The text is first cut into pieces by ``PIECE``: a run of letters, of
  digits or of other symbols, each with at most one space in front of it, or a run of
  whitespace. Merges never cross a piece boundary, and a word keeps its leading space as GPT-2's
  tokens do (" the" and "the" are different tokens). The oracle uses the same regex.
- **Start.** Every character of the text is a token; ids go to the characters in code-point
  order.
- **Each merge.** Count every adjacent pair of tokens in every piece (a piece that occurs n
  times counts n times, and "aaa" holds the pair (a, a) twice). The most frequent pair is merged
  into a new token with the next id. **Ties**: among pairs with the same count, the pair whose
  (left id, right id) is smallest wins, i.e. lower left id first, then lower right id; so older
  and lower-code-point tokens win. Merging rewrites each piece left to right without overlap
  ("aaa" → "aa", "a").
- **Stop** when the vocabulary has ``vocab_size`` tokens or no pair occurs ``min_frequency``
  times.

Encoding applies the learned merges to each piece in the order they were learned. A character
that the training text never contained has no id: ``encode`` reports it as unknown (a byte-level
BPE starts from the 256 bytes instead, so it never meets an unknown character).
"""

from __future__ import annotations

import heapq
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property

PIECE = r" ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+"
_PIECE_RE = re.compile(PIECE)

UNKNOWN_ID = -1


def pre_tokenize(text: str) -> list[str]:
    """The text cut into pieces that merges never cross."""
    return _PIECE_RE.findall(text)


def merge_pair(symbols: list[str], pair: tuple[str, str]) -> list[str]:
    """Replace each non-overlapping occurrence of ``pair``, left to right, by the joined token."""
    out, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
            out.append(symbols[i] + symbols[i + 1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


@dataclass(frozen=True)
class Merge:
    left: str
    right: str
    count: int  # how often the pair occurred when it was chosen

    @property
    def token(self) -> str:
        return self.left + self.right


@dataclass
class BPE:
    vocab: dict[str, int] = field(default_factory=dict)  # token → id
    merges: list[Merge] = field(default_factory=list)

    def encode_piece(self, piece: str) -> list[str]:
        """Apply the merges in the order they were learned: repeatedly merge the adjacent pair
        that was learned first (same result as replaying every merge, much faster)."""
        ranks = self._ranks
        symbols = list(piece)
        while len(symbols) > 1:
            pairs = set(zip(symbols, symbols[1:]))
            first = min(pairs, key=lambda p: ranks.get(p, len(ranks)))
            if first not in ranks:
                break
            symbols = merge_pair(symbols, first)
        return symbols

    @cached_property
    def _ranks(self) -> dict[tuple[str, str], int]:
        """Each pair's position in the merge list (computed once, on the first encode)."""
        ranks: dict[tuple[str, str], int] = {}
        for i, m in enumerate(self.merges):
            ranks.setdefault((m.left, m.right), i)
        return ranks

    def truncated(self, n_merges: int) -> BPE:
        """The tokenizer after its first ``n_merges`` merges (a smaller vocabulary)."""
        merges = self.merges[:n_merges]
        made = {m.token for m in merges}
        return BPE({t: i for t, i in self.vocab.items() if len(t) == 1 or t in made}, merges)

    def tokens(self, text: str) -> list[str]:
        return [t for piece in pre_tokenize(text) for t in self.encode_piece(piece)]

    def encode(self, text: str) -> list[int]:
        """Token ids; a character never seen in training gives ``UNKNOWN_ID``."""
        return [self.vocab.get(t, UNKNOWN_ID) for t in self.tokens(text)]

    def decode(self, ids: list[int]) -> str:
        by_id = {i: t for t, i in self.vocab.items()}
        return "".join(by_id[i] for i in ids)


def train_bpe(text: str, vocab_size: int, min_frequency: int = 2) -> BPE:
    """Learn merges on ``text`` until the vocabulary has ``vocab_size`` tokens (see the module doc)."""
    if vocab_size < 1:
        raise ValueError(f"vocab_size must be at least 1, got {vocab_size}")
    freq = Counter(pre_tokenize(text))  # each distinct piece once, with how often it occurs
    pieces = [list(p) for p in freq]
    weights = list(freq.values())
    vocab = {ch: i for i, ch in enumerate(sorted({ch for p in freq for ch in p}))}
    bpe = BPE(vocab=vocab)
    # Pair counts over all pieces, and which pieces hold each pair, so that a merge only
    # recounts the pieces it changes (recounting everything is far too slow on 30,000 names).
    counts: Counter = Counter()
    holders: dict[tuple[str, str], set[int]] = {}
    for i, symbols in enumerate(pieces):
        for pair in zip(symbols, symbols[1:]):
            counts[pair] += weights[i]
            holders.setdefault(pair, set()).add(i)
    # A heap ordered as the rule says: highest count, then smallest (left id, right id). Entries
    # go stale when a count changes; a stale one is skipped when it comes to the top.
    heap = [(-c, vocab[a], vocab[b], a, b) for (a, b), c in counts.items()]
    heapq.heapify(heap)
    while len(vocab) < vocab_size and heap:
        neg, _, _, a, b = heapq.heappop(heap)
        if counts.get((a, b)) != -neg:
            continue
        if -neg < min_frequency:
            break
        best = (a, b)
        bpe.merges.append(Merge(a, b, -neg))
        vocab.setdefault(a + b, len(vocab))
        changed = set()
        for i in holders.pop(best):
            old = pieces[i]
            for pair in zip(old, old[1:]):
                counts[pair] -= weights[i]
                changed.add(pair)
            pieces[i] = new = merge_pair(old, best)
            for pair in zip(new, new[1:]):
                counts[pair] += weights[i]
                holders.setdefault(pair, set()).add(i)
                changed.add(pair)
        for pair in changed:
            if counts[pair] > 0:
                heapq.heappush(heap, (-counts[pair], vocab[pair[0]], vocab[pair[1]], *pair))
            else:
                del counts[pair]
    return bpe


def show_token(token: str) -> str:
    """A token as the lessons print it: a space as ␣, a newline as ⏎."""
    return token.replace(" ", "␣").replace("\n", "⏎").replace("\t", "⇥")


@dataclass(frozen=True)
class TokenRow:
    """One vocabulary size's view of a text: what the explorer shows."""

    vocab_size: int
    tokens: list[str]
    ids: list[int]  # UNKNOWN_ID for a token made of a character never seen in training

    @property
    def unknown(self) -> list[str]:
        return list(dict.fromkeys(t for t, i in zip(self.tokens, self.ids) if i == UNKNOWN_ID))


def token_rows(bpe: BPE, text: str, merge_counts) -> list[TokenRow]:
    """The text encoded after each number of merges in ``merge_counts`` (capped at those learned)."""
    rows = []
    for n in merge_counts:
        small = bpe.truncated(n)
        tokens = small.tokens(text)
        rows.append(TokenRow(len(small.vocab), tokens, [small.vocab.get(t, UNKNOWN_ID) for t in tokens]))
    return rows
