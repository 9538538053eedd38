"""Words in, tensors out: loading a one-item-per-line dataset, the character vocabulary, splits.

Every sequence is a whole word. The input is the start token followed by the word, the target is
the word followed by the end token (the same ``.`` character, index 0), and shorter words are
padded: inputs with 0, targets with ``IGNORE`` so padding never reaches the loss. Every real
position therefore contributes a prediction, unlike a fixed window with a single target.
"""

from __future__ import annotations

from minigpt.errors import DatasetError

import random
from dataclasses import dataclass
from pathlib import Path

import torch

from minigpt import paths

BOUNDARY = "."  # start and end token, index 0
IGNORE = -1  # target index that cross-entropy skips




def load_words(path: Path | str | None = None) -> list[str]:
    """Read one item per line; blank lines and surrounding whitespace are ignored."""
    path = Path(path) if path is not None else paths.default_dataset()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise DatasetError(f"{path}: is a folder, expected a text file with one item per line") from None
    except OSError as e:
        raise DatasetError(f"{path}: cannot read ({e.strerror})") from None
    if not raw.strip():
        raise DatasetError(f"{path}: the file is empty; expected one item per line")
    if b"\x00" in raw:
        line = raw[: raw.index(b"\x00")].count(b"\n") + 1
        raise DatasetError(f"{path}: line {line} contains a NUL byte; this looks like a binary file, not text")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise DatasetError(
            f"{path}: line {line} is not valid UTF-8 (byte 0x{raw[e.start]:02x}); save the file as UTF-8"
        ) from None
    words = []
    for number, line in enumerate(text.splitlines(), start=1):
        item = line.strip()
        if not item:
            continue
        if BOUNDARY in item:
            raise DatasetError(
                f"{path}: line {number} ({item!r}) contains {BOUNDARY!r}, which is reserved as the "
                f"start/end token"
            )
        words.append(item)
    if not words:
        raise DatasetError(f"{path}: no usable line (every line is blank)")
    return words


@dataclass(frozen=True)
class Vocab:
    """Characters with ``.`` at index 0; stored in every checkpoint."""

    chars: tuple[str, ...]  # index -> character, chars[0] == BOUNDARY

    @classmethod
    def from_words(cls, words: list[str]) -> "Vocab":
        return cls((BOUNDARY, *sorted(set("".join(words)) - {BOUNDARY})))

    @classmethod
    def from_list(cls, chars: list[str]) -> "Vocab":
        if not chars or chars[0] != BOUNDARY or len(set(chars)) != len(chars):
            raise DatasetError(f"invalid vocabulary {chars!r}: must start with {BOUNDARY!r}, no repeats")
        return cls(tuple(chars))

    @property
    def size(self) -> int:
        return len(self.chars)

    @property
    def stoi(self) -> dict[str, int]:
        return {c: i for i, c in enumerate(self.chars)}

    def unknown(self, text: str) -> list[str]:
        """Characters of ``text`` that the vocabulary lacks (in order, without repeats)."""
        known = set(self.chars)
        return list(dict.fromkeys(c for c in text if c not in known))

    def encode(self, text: str) -> list[int]:
        missing = self.unknown(text)
        if missing:
            raise ValueError(
                f"{', '.join(repr(c) for c in missing)} not in the model's vocabulary "
                f"({''.join(self.chars[1:])})"
            )
        s = self.stoi
        return [s[c] for c in text]

    def decode(self, ids) -> str:
        return "".join(self.chars[int(i)] for i in ids)


@dataclass
class Splits:
    train: list[str]
    val: list[str]
    test: list[str]


def split_words(words: list[str], seed: int = 42, fractions=(0.8, 0.1)) -> Splits:
    """Deterministic 80/10/10 split: a seeded shuffle of the list, then cut."""
    order = list(range(len(words)))
    random.Random(seed).shuffle(order)
    shuffled = [words[i] for i in order]
    n_train = int(fractions[0] * len(words))
    n_val = int(fractions[1] * len(words))
    return Splits(shuffled[:n_train], shuffled[n_train : n_train + n_val], shuffled[n_train + n_val :])


class EncodedSplit:
    """A split as padded (N, block_size) input/target tensors plus each word's length."""

    def __init__(self, words: list[str], vocab: Vocab, block_size: int):
        n = len(words)
        vocab.encode("".join(dict.fromkeys("".join(words))))  # one clear error for unknown characters
        stoi = vocab.stoi
        ids = [[stoi[c] for c in w[: block_size - 1]] for w in words]
        k = torch.tensor([len(row) for row in ids], dtype=torch.long)
        flat = torch.tensor([i for row in ids for i in row], dtype=torch.long)
        pos = torch.arange(block_size)
        self.x = torch.zeros(n, block_size, dtype=torch.long)
        self.y = torch.full((n, block_size), IGNORE, dtype=torch.long)
        # Row-major boolean assignment fills each row's characters in order.
        self.x[(pos[None, :] >= 1) & (pos[None, :] <= k[:, None])] = flat
        self.y[pos[None, :] < k[:, None]] = flat
        self.y[torch.arange(n), k] = 0
        self.lengths = k + 1  # real positions = len(word) + 1

    def __len__(self) -> int:
        return self.x.shape[0]

    def batch(self, index: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Rows ``index``, trimmed to the longest word among them (most positions are padding)."""
        t = int(self.lengths[index].max())
        return self.x[index, :t], self.y[index, :t]

    def packed_batch(self, index: torch.Tensor) -> "PackedBatch":
        """The words ``index`` packed several to a row, with each token's position and word.

        A trimmed batch is still ~40% padding (names average 7 positions, the longest in a batch
        of 128 about 12). Packing short words beside long ones removes most of it; the model keeps
        the words apart with a mask (``segments``) and restarts positions at each word, so the
        loss and gradients equal those of :meth:`batch` on the same words.
        """
        lens = self.lengths[index]
        row, offset, n_rows = pack_rows(lens.tolist(), self.x.shape[1])
        row, offset = torch.tensor(row), torch.tensor(offset)
        width = int((offset + lens).max())
        # One entry per real token: which word it belongs to and its position j within it.
        word = torch.repeat_interleave(torch.arange(len(lens)), lens)
        j = torch.arange(int(lens.sum())) - torch.repeat_interleave(torch.cumsum(lens, 0) - lens, lens)
        r, c = row[word], offset[word] + j
        x = torch.zeros(n_rows, width, dtype=torch.long)
        y = torch.full((n_rows, width), IGNORE, dtype=torch.long)
        positions = torch.zeros(n_rows, width, dtype=torch.long)
        segments = torch.full((n_rows, width), -1, dtype=torch.long)
        source = index[word]
        x[r, c], y[r, c] = self.x[source, j], self.y[source, j]
        positions[r, c], segments[r, c] = j, word
        return PackedBatch(x, y, positions, segments)


@dataclass
class PackedBatch:
    x: torch.Tensor  # (rows, width) inputs
    y: torch.Tensor  # (rows, width) targets, IGNORE on padding
    positions: torch.Tensor  # each token's position within its own word
    segments: torch.Tensor  # which word each token belongs to; -1 on padding


def pack_rows(lengths: list[int], capacity: int) -> tuple[list[int], list[int], int]:
    """Place sequences of ``lengths`` into rows of ``capacity``: (row, offset) per sequence, rows.

    Two pointers over the lengths sorted: each row takes the longest sequence left, then as many
    of the shortest as still fit. Linear time, and close to the best packing for names.
    """
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    row, offset = [0] * len(lengths), [0] * len(lengths)
    short, long, n_rows = 0, len(order) - 1, 0
    while short <= long:
        k = order[long]
        row[k], offset[k], used = n_rows, 0, lengths[k]
        long -= 1
        while short <= long and used + lengths[order[short]] <= capacity:
            k = order[short]
            row[k], offset[k] = n_rows, used
            used += lengths[k]
            short += 1
        n_rows += 1
    return row, offset, n_rows


@dataclass
class Dataset:
    words: list[str]
    vocab: Vocab
    splits: Splits
    block_size: int
    train: EncodedSplit
    val: EncodedSplit
    test: EncodedSplit
    source: str

    def split(self, name: str) -> EncodedSplit:
        return {"train": self.train, "val": self.val, "test": self.test}[name]

    def membership(self, word: str) -> str:
        """'train', 'val', 'test' or 'new': where a generated word stands."""
        for name in ("train", "val", "test"):
            if word in self._sets[name]:
                return name
        return "new"

    @property
    def _sets(self) -> dict[str, set[str]]:
        if not hasattr(self, "_cached_sets"):
            self._cached_sets = {n: set(getattr(self.splits, n)) for n in ("train", "val", "test")}
        return self._cached_sets


def load_dataset(path: Path | str | None = None, seed: int = 42, vocab: Vocab | None = None,
                 block_size: int | None = None) -> Dataset:
    """Load, build (or reuse) the vocabulary, split and encode."""
    words = load_words(path)
    vocab = vocab or Vocab.from_words(words)
    missing = vocab.unknown("".join(words))
    if missing:
        raise DatasetError(
            f"{path}: characters {''.join(missing)!r} are not in the model's vocabulary"
        )
    longest = max(len(w) for w in words) + 1
    block_size = block_size or longest
    splits = split_words(words, seed)
    return Dataset(
        words=words, vocab=vocab, splits=splits, block_size=block_size,
        train=EncodedSplit(splits.train, vocab, block_size),
        val=EncodedSplit(splits.val, vocab, block_size),
        test=EncodedSplit(splits.test, vocab, block_size),
        source=str(path if path is not None else paths.default_dataset()),
    )
