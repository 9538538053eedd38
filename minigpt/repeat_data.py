"""Sequences with a repeated random chunk: the data on which induction heads grow
(``--format repeats``).

Each row is the start token, a few random letters, then a chunk of L random letters, the same
chunk again, and random letters up to the block size::

    . m e q x f b k q x f b k w a z …    (2 letters before, L = 5 here; both drawn per row)

Nothing in a random letter can be predicted, except inside the second copy: there, the letter
after the current one is the letter that followed it in the first copy. A model that learns to
look back for "where did my letter appear before, and what came next" (an induction head, fed by
a previous-token head in the layer below) brings the loss on those positions close to zero while
the rest stays at ln 26. Where the chunk starts and how long it is change from row to row, so
no rule about positions can do the same job (with the chunk always at the start, a model learns
one: it reads positions, not letters).

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
                min_chunk: int = MIN_CHUNK) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``n`` rows of ``block_size + 1`` token ids, each row's chunk length L and the column where
    its first copy starts (its second copy starts L columns later).

    Letters are ids 1 … 26 drawn uniformly; id 0 (the start token) opens every row. A block too
    short for chunks of ``min_chunk`` letters gets shorter chunks (down to one letter)."""
    top = max_chunk(block_size)
    if top < 1:
        raise DatasetError(f"block size {block_size} is too small for repeated chunks: two copies of "
                           f"one letter need a block of at least 2")
    min_chunk = min(min_chunk, top)
    gen = torch.Generator().manual_seed(seed)
    rows = torch.randint(1, len(LETTERS) + 1, (n, block_size + 1), generator=gen)
    rows[:, 0] = 0
    lengths = torch.randint(min_chunk, top + 1, (n,), generator=gen)
    # the free letters (block - 2L) split at random between before the chunk and after its copy
    starts = 1 + (torch.rand(n, generator=gen) * (block_size - 2 * lengths + 1)).long()
    cols = torch.arange(block_size + 1)[None, :]
    first, length = starts[:, None], lengths[:, None]
    second = (cols >= first + length) & (cols < first + 2 * length)  # the second copy's columns
    source = (cols - length).clamp(min=0)  # where each of them copies from
    rows = torch.where(second, rows.gather(1, source), rows)
    return rows, lengths, starts


def repeated_targets(lengths: torch.Tensor, starts: torch.Tensor, block_size: int) -> torch.Tensor:
    """(n, block_size) mask over the targets y = row[1:]: True where the letter to predict is a
    second-copy letter whose predecessor is one too (the first letter of the copy cannot be
    foreseen: nothing says the chunk has ended)."""
    j = torch.arange(1, block_size + 1)[None, :]  # the row column each target comes from
    copy = starts[:, None] + lengths[:, None]
    return (j > copy) & (j < copy + lengths[:, None])


class RepeatSplit:
    """Rows served as (x, y) = (row[:-1], row[1:]), like a text window."""

    def __init__(self, rows: torch.Tensor, chunk_lengths: torch.Tensor, chunk_starts: torch.Tensor):
        self.rows, self.chunk_lengths, self.chunk_starts = rows, chunk_lengths, chunk_starts
        self.block_size = rows.shape[1] - 1
        self.lengths = torch.full((len(rows),), self.block_size, dtype=torch.long)

    def __len__(self) -> int:
        return len(self.rows)

    def batch(self, index: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        rows = self.rows[index]
        return rows[:, :-1], rows[:, 1:]

    def repeated_mask(self, index: torch.Tensor | None = None) -> torch.Tensor:
        if index is None:
            return repeated_targets(self.chunk_lengths, self.chunk_starts, self.block_size)
        return repeated_targets(self.chunk_lengths[index], self.chunk_starts[index], self.block_size)


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
