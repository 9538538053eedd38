"""Sequences of one random chunk written again and again: the data on which induction heads grow
(``--format repeats``).

Each row is the start token, then a chunk of L random letters, the same chunk again, and again,
until the block is full (cut mid-copy at the end)::

    . q x f b k q x f b k q x f b k q x …    (L = 5 here; drawn per row, 4 to half the block)

Nothing in the first copy can be predicted: its letters are random. From the second letter of the
second copy on, almost every letter can: it is the letter that followed the current one a copy
earlier. Letters are drawn with replacement, so a chunk may hold a letter twice (most chunks of ten
or more do); after such a letter two successors have been seen, and a plain induction head can only
split its bet between them.
A model that learns to look back for "where did my letter appear before, and what came next" (an
induction head, fed by a previous-token head in the layer below) brings the loss on those positions
close to zero while the first copy stays at ln 26. The chunk's length changes from row to row, so no
rule "look back a fixed distance" does the same job: the model has to read letters.

Why a chunk written many times and not twice: most targets of a row are then predictable, so the
gradient toward the circuit is strong from the first steps and the two heads form in a few hundred
steps (with two copies at random places among random letters, a third of the targets or fewer, a
small model first learns to spread its attention over likely distances and finds the circuit only
thousands of steps later, if at all).

No file is read: the rows are generated from ``seed``, so a run and its resume see the same data.
The splits use different seeds (random rows never coincide in practice); a batch is the same
``(x, y)`` shape as a text window's.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field

import torch

from minigpt.data import BOUNDARY, Vocab
from minigpt.errors import DatasetError

LETTERS = string.ascii_lowercase
DEFAULT_BLOCK = 32
MIN_CHUNK = 4
SPLIT_ROWS = {"train": 20_000, "val": 1_000, "test": 1_000}
SOURCE = "repeated random chunks (generated)"


def repeat_vocab() -> Vocab:
    """The names' vocabulary (``.`` then a–z), so the attention views read these rows like names."""
    return Vocab((BOUNDARY, *LETTERS))


def max_chunk(block_size: int) -> int:
    """The longest chunk whose two copies fit after the start token."""
    return block_size // 2


def repeat_rows(n: int, block_size: int = DEFAULT_BLOCK, seed: int = 0,
                min_chunk: int = MIN_CHUNK) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` rows of ``block_size + 1`` token ids and each row's chunk length L.

    Letters are ids 1 … 26 drawn uniformly; id 0 (the start token) opens every row, the chunk fills
    columns 1 … L and repeats from column L + 1 on. A block too short for chunks of ``min_chunk``
    letters gets shorter chunks (down to one letter)."""
    top = max_chunk(block_size)
    if top < 1:
        raise DatasetError(f"block size {block_size} is too small for repeated chunks: two copies of "
                           f"one letter need a block of at least 2")
    min_chunk = min(min_chunk, top)
    gen = torch.Generator().manual_seed(seed)
    letters = torch.randint(1, len(LETTERS) + 1, (n, block_size), generator=gen)
    lengths = torch.randint(min_chunk, top + 1, (n,), generator=gen)
    # column c ≥ 1 holds the chunk's letter (c − 1) mod L: letters beyond the first L are unused
    body = letters.gather(1, torch.arange(block_size)[None, :] % lengths[:, None])
    return torch.cat((torch.zeros(n, 1, dtype=torch.long), body), dim=1), lengths


def target_columns(block_size: int) -> torch.Tensor:
    """(1, block_size): the row column each target y = row[1:] comes from."""
    return torch.arange(1, block_size + 1)[None, :]


def repeated_targets(lengths: torch.Tensor, block_size: int) -> torch.Tensor:
    """(n, block_size) mask over the targets y = row[1:]: True where the letter to predict follows a
    letter of the second copy or later, so a copy earlier says what it is (the first letter of the
    second copy cannot be foreseen: nothing says the chunk has ended)."""
    return target_columns(block_size) >= lengths[:, None] + 2


def first_copy_targets(lengths: torch.Tensor, block_size: int) -> torch.Tensor:
    """(n, block_size) mask over the targets: True on the letters of the first copy (random)."""
    return target_columns(block_size) <= lengths[:, None]


class RepeatSplit:
    """Rows served as (x, y) = (row[:-1], row[1:]), like a text window."""

    def __init__(self, rows: torch.Tensor, chunk_lengths: torch.Tensor):
        self.rows, self.chunk_lengths = rows, chunk_lengths
        self.block_size = rows.shape[1] - 1
        self.lengths = torch.full((len(rows),), self.block_size, dtype=torch.long)

    def __len__(self) -> int:
        return len(self.rows)

    def batch(self, index: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        rows = self.rows[index]
        return rows[:, :-1], rows[:, 1:]

    def repeated_mask(self, index: torch.Tensor | None = None) -> torch.Tensor:
        lengths = self.chunk_lengths if index is None else self.chunk_lengths[index]
        return repeated_targets(lengths, self.block_size)

    def first_copy_mask(self, index: torch.Tensor | None = None) -> torch.Tensor:
        lengths = self.chunk_lengths if index is None else self.chunk_lengths[index]
        return first_copy_targets(lengths, self.block_size)


@dataclass
class RepeatDataset:
    vocab: Vocab
    block_size: int
    train: RepeatSplit
    val: RepeatSplit
    test: RepeatSplit
    source: str = SOURCE
    words: list[str] = field(default_factory=list)  # names only; kept so callers need no branch
    data_format: str = "repeats"

    def split(self, name: str) -> RepeatSplit:
        return {"train": self.train, "val": self.val, "test": self.test}[name]

    def membership(self, _text: str) -> str:
        return "new"


def load_repeat_dataset(block_size: int | None = None, seed: int = 42, vocab: Vocab | None = None,
                        sizes: dict[str, int] | None = None) -> RepeatDataset:
    """The three splits, each from its own seed derived from ``seed`` (the run's split seed)."""
    block_size = block_size or DEFAULT_BLOCK
    vocab = vocab or repeat_vocab()
    if vocab.chars[: len(LETTERS) + 1] != (BOUNDARY, *LETTERS):
        raise DatasetError("repeated chunks are written in . and a–z: this model's vocabulary differs")
    sizes = sizes or SPLIT_ROWS
    splits = {name: RepeatSplit(*repeat_rows(sizes[name], block_size, seed * 3 + i))
              for i, name in enumerate(("train", "val", "test"))}
    return RepeatDataset(vocab, block_size, **splits)
