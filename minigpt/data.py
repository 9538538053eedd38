"""Words in, tensors out: loading a one-item-per-line dataset, the character vocabulary, the
encoded splits (cut by ``minigpt.splits``).

Every sequence is a whole word. The input is the start token followed by the word, the target is
the word followed by the end token (the same ``.`` character, index 0), and shorter words are
padded: inputs with 0, targets with ``IGNORE`` so padding never reaches the loss. Every real
position therefore contributes a prediction, unlike a fixed window with a single target.

Memory stays a small multiple of the file (``minigpt.corpus``): a split keeps one flat array of
token ids shared by all its words plus each word's start and length, and builds the padded rows
of a batch when asked. Items longer than the block size are cut there; the dataset counts them
(:attr:`Dataset.cut_items`) so the trainer can say so.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import torch

from minigpt import paths
from minigpt.corpus import BOUNDARY, Items, WordList, read_items
from minigpt.errors import DatasetError
from minigpt.splits import MIN_ITEMS, Splits, split_order, split_sizes
from minigpt.tokenizer import shown_piece

IGNORE = -1  # target index that cross-entropy skips
MAX_VOCAB = 30_000  # more distinct characters than any alphabet: a binary or random file
MAX_AUTO_BLOCK = 256  # without --block-size, longer items are cut here (attention grows as T²)


def _too_few(path, n: int) -> DatasetError:
    return DatasetError(f"{path}: {n} item{'s' if n != 1 else ''}; need at least {MIN_ITEMS} (one "
                        f"each for training, validation and test), one per line")


def load_words(path: Path | str | None = None) -> WordList:
    """Every non-blank line, stripped; refuses what training cannot use (``minigpt.corpus``)."""
    path = Path(path) if path is not None else paths.default_dataset()
    items = read_items(path)
    if len(items) < MIN_ITEMS:
        raise _too_few(path, len(items))
    return WordList(items.points, items.starts, items.lengths, present=items.alphabet)


@dataclass(frozen=True)
class Vocab:
    """Characters with ``.`` at index 0; stored in every checkpoint."""

    chars: tuple[str, ...]  # index -> character, chars[0] == BOUNDARY

    @classmethod
    def from_words(cls, words) -> Vocab:
        if isinstance(words, WordList) and words.present is not None:  # counted while reading
            return cls._checked((BOUNDARY, *(chr(c) for c in words.present.tolist() if chr(c) != BOUNDARY)))
        return cls._checked((BOUNDARY, *sorted(set("".join(words)) - {BOUNDARY})))

    @classmethod
    def from_list(cls, chars: list[str]) -> Vocab:
        if (not isinstance(chars, (list, tuple)) or not chars or chars[0] != BOUNDARY
                or not all(isinstance(c, str) and len(c) == 1 for c in chars)
                or len(set(chars)) != len(chars)):
            shown = repr(chars)[:80]
            raise DatasetError(f"invalid vocabulary {shown}: must be single characters starting with "
                               f"{BOUNDARY!r}, no repeats")
        return cls._checked(tuple(chars))

    @classmethod
    def _checked(cls, chars: tuple[str, ...]) -> Vocab:
        if len(chars) > MAX_VOCAB:
            raise DatasetError(f"{len(chars) - 1:,} different characters (at most {MAX_VOCAB - 1:,}); "
                               f"this looks like binary or random data, not one item per line")
        return cls(chars)

    @property
    def size(self) -> int:
        return len(self.chars)

    @cached_property
    def stoi(self) -> dict[str, int]:
        return {c: i for i, c in enumerate(self.chars)}

    def unknown(self, text: str) -> list[str]:
        """Characters of ``text`` that the vocabulary lacks (in order, without repeats)."""
        known = self.stoi
        return list(dict.fromkeys(c for c in text if c not in known))

    def encode(self, text: str) -> list[int]:
        missing = self.unknown(text)
        if missing:
            raise ValueError(
                f"{', '.join(repr(c) for c in missing)} not in the model's vocabulary "
                f"({''.join(self.chars[1:])!r})"
            )
        s = self.stoi
        return [s[c] for c in text]

    def decode(self, ids) -> str:
        return "".join(self.chars[int(i)] for i in ids)

    def piece(self, token_id: int) -> str:
        """The character itself, made visible (``minigpt.tokenizer``'s interface)."""
        return shown_piece(self.chars[int(token_id)])

    def token_bytes(self, token_id: int) -> bytes:
        return self.chars[int(token_id)].encode("utf-8", "surrogatepass")

    def ids_of(self, points: np.ndarray, where: str = "") -> np.ndarray:
        """Code points to token ids (uint8 or int16); unknown characters raise a DatasetError."""
        codes = [ord(c) for c in self.chars]
        ids = np.empty(len(points), dtype=np.uint8 if self.size <= 256 else np.int16)
        step = 1 << 22  # in slices: a whole copy (or an int32 one) would be 1–4× the text again
        if points.dtype == np.uint8 and self.size < 256:  # bytes.translate: one C pass
            table = bytearray(b"\xff" * 256)
            for i, c in enumerate(codes):
                if c < 256:
                    table[c] = i
            for i in range(0, len(points), step):
                part = points[i : i + step].tobytes().translate(table)
                if b"\xff" in part:
                    self._refuse(points[i : i + step][np.frombuffer(part, np.uint8) == 0xFF], where)
                ids[i : i + step] = np.frombuffer(part, dtype=np.uint8)
            return ids
        table = np.full(max(max(codes), int(points.max(initial=0))) + 1, -1, dtype=np.int32)
        table[codes] = np.arange(self.size, dtype=np.int32)
        for i in range(0, len(points), step):
            mapped = table[points[i : i + step]]
            if (mapped < 0).any():
                self._refuse(points[i : i + step][mapped < 0], where)
            ids[i : i + step] = mapped
        return ids

    @staticmethod
    def _refuse(unknown: np.ndarray, where: str):
        missing = "".join(sorted({chr(c) for c in np.unique(unknown).tolist()}))
        raise DatasetError(f"{where}characters {missing!r} are not in the model's vocabulary")


class EncodedSplit:
    """A split's words as token ids; padded (rows, width) input/target tensors per batch.

    ``tokens`` is one flat id array (shared between splits), ``starts`` and ``n_chars`` locate
    each word in it, ``lengths`` counts its real positions: the start token plus the characters
    kept (at most ``block_size - 1``).
    """

    def __init__(self, words, vocab: Vocab, block_size: int):
        words = list(words)
        vocab.encode("".join(dict.fromkeys("".join(words))))  # one clear error for unknown characters
        stoi = vocab.stoi
        flat = np.array([stoi[c] for w in words for c in w], dtype=np.int64)
        n_chars = np.array([len(w) for w in words], dtype=np.int32)
        starts = np.zeros(len(words), dtype=np.int32)
        np.cumsum(n_chars[:-1], out=starts[1:])
        self._setup(flat.astype(np.uint8 if vocab.size <= 256 else np.int16), starts, n_chars, vocab,
                    block_size)

    @classmethod
    def from_arrays(cls, tokens: np.ndarray, starts: np.ndarray, n_chars: np.ndarray, vocab: Vocab,
                    block_size: int) -> EncodedSplit:
        split = cls.__new__(cls)
        split._setup(tokens, starts, n_chars, vocab, block_size)
        return split

    def _setup(self, tokens, starts, n_chars, vocab: Vocab, block_size: int) -> None:
        self.vocab, self.block_size = vocab, block_size
        self._np_tokens, self._np_starts, self._np_chars = tokens, starts, n_chars
        self.tokens = torch.from_numpy(tokens)
        self.starts = torch.from_numpy(starts)
        lengths = np.empty(len(n_chars), dtype=np.int16 if block_size < 2**15 else np.int32)
        np.minimum(n_chars, block_size - 1, out=lengths, casting="unsafe")
        lengths += 1
        self.lengths = torch.from_numpy(lengths)

    def __len__(self) -> int:
        return len(self._np_chars)

    @property
    def words(self) -> WordList:
        return WordList(self._np_tokens, self._np_starts, self._np_chars, self.vocab.chars)

    def _rows(self, index: torch.Tensor, width: int) -> tuple[torch.Tensor, torch.Tensor]:
        n = (self.lengths[index].long() - 1)[:, None]  # characters kept per word
        pos = torch.arange(width)[None, :]
        if self.tokens.numel() == 0:
            chars = torch.zeros(len(index), width, dtype=torch.long)
        else:
            at = (self.starts[index][:, None] + pos).clamp_(max=self.tokens.numel() - 1)
            chars = self.tokens[at].long()  # chars[:, j] is character j of the word (where j < n)
        y = torch.where(pos < n, chars, torch.full_like(chars, IGNORE))
        y = torch.where(pos == n, torch.zeros_like(y), y)
        x = torch.zeros_like(chars)
        x[:, 1:] = torch.where(pos[:, 1:] <= n, chars[:, :-1], torch.zeros_like(chars[:, :-1]))
        return x, y

    @cached_property
    def _padded(self) -> tuple[torch.Tensor, torch.Tensor]:
        return self._rows(torch.arange(len(self)), self.block_size)

    @property
    def x(self) -> torch.Tensor:
        """Every word's input row, padded to the block size (built on first use)."""
        return self._padded[0]

    @property
    def y(self) -> torch.Tensor:
        return self._padded[1]

    def batch(self, index: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Rows ``index``, trimmed to the longest word among them (most positions are padding)."""
        return self._rows(index, int(self.lengths[index].max()))

    def packed_batch(self, index: torch.Tensor) -> PackedBatch:
        """The words ``index`` packed several to a row, with each token's position and word.

        A trimmed batch is still ~40% padding (names average 7 positions, the longest in a batch
        of 128 about 12). Packing short words beside long ones removes most of it; the model keeps
        the words apart with a mask (``segments``) and restarts positions at each word, so the
        loss and gradients equal those of :meth:`batch` on the same words.
        """
        lens = self.lengths[index].long()
        row, offset, n_rows = pack_rows(lens.tolist(), self.block_size)
        row, offset = torch.tensor(row), torch.tensor(offset)
        width = int((offset + lens).max())
        # One entry per real token: which word it belongs to and its position j within it.
        word = torch.repeat_interleave(torch.arange(len(lens)), lens)
        j = torch.arange(int(lens.sum())) - torch.repeat_interleave(torch.cumsum(lens, 0) - lens, lens)
        r, c = row[word], offset[word] + j
        start, n = self.starts[index][word], (lens - 1)[word]
        last = max(self.tokens.numel() - 1, 0)
        here = self.tokens[(start + j).clamp(max=last)].long()  # character j
        before = self.tokens[(start + j - 1).clamp(min=0, max=last)].long()  # character j - 1
        x = torch.zeros(n_rows, width, dtype=torch.long)
        y = torch.full((n_rows, width), IGNORE, dtype=torch.long)
        positions = torch.zeros(n_rows, width, dtype=torch.long)
        segments = torch.full((n_rows, width), -1, dtype=torch.long)
        x[r, c] = torch.where(j == 0, torch.zeros_like(before), before)
        y[r, c] = torch.where(j < n, here, torch.zeros_like(here))
        positions[r, c], segments[r, c] = j, word
        return PackedBatch(x, y, positions, segments)

    def find(self, word: str) -> bool:
        """Whether ``word`` (uncut) is one of this split's words: a vectorised scan, no set."""
        try:
            ids = self.vocab.encode(word)
        except ValueError:
            return False
        candidates = np.flatnonzero(self._np_chars == len(ids))
        for j, token in enumerate(ids):
            if not len(candidates):
                break
            candidates = candidates[self._np_tokens[self._np_starts[candidates] + j] == token]
        return bool(len(candidates))


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


class Chained(Sequence[str]):
    """Several word lists read as one, without copying them."""

    def __init__(self, *parts):
        self._parts = parts

    def __len__(self) -> int:
        return sum(len(p) for p in self._parts)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        for part in self._parts:
            if 0 <= index < len(part):
                return part[index]
            index -= len(part)
        raise IndexError("index out of range")

    def __iter__(self) -> Iterator[str]:
        for part in self._parts:
            yield from part


@dataclass
class Dataset:
    words: Sequence[str]  # every item (split order: train, val, test)
    vocab: Vocab
    splits: Splits
    block_size: int
    train: EncodedSplit
    val: EncodedSplit
    test: EncodedSplit
    source: str
    cut_items: int = 0  # items longer than block_size - 1 characters, cut to fit
    longest: int = field(default=0)  # the longest item's length in characters

    def split(self, name: str) -> EncodedSplit:
        return {"train": self.train, "val": self.val, "test": self.test}[name]

    def membership(self, word: str) -> str:
        """'train', 'val', 'test' or 'new': where a generated word stands."""
        for name in ("train", "val", "test"):
            if self.split(name).find(word):
                return name
        return "new"

    @property
    def cut_note(self) -> str | None:
        """One sentence for the learner when some items do not fit the block size."""
        return _cut_sentence(self.cut_items, self.longest, self.block_size)


def auto_block_size(longest: int) -> int:
    """The block size when none is given: the longest item and its end token, at most 256."""
    return min(longest + 1, MAX_AUTO_BLOCK)


def cut_note(words: WordList, block_size: int | None = None) -> str | None:
    """What :attr:`Dataset.cut_note` will say for ``words``, before encoding them."""
    longest = int(words.lengths.max())
    block_size = block_size or auto_block_size(longest)
    return _cut_sentence(int(np.count_nonzero(words.lengths > block_size - 1)), longest, block_size)


def _cut_sentence(cut: int, longest: int, block_size: int) -> str | None:
    if not cut:
        return None
    return (f"{cut:,} item{'s are' if cut > 1 else ' is'} longer than {block_size - 1} characters "
            f"(the longest has {longest:,}) and {'are' if cut > 1 else 'is'} cut at the block "
            f"size {block_size}")


def load_dataset(path: Path | str | None = None, seed: int = 42, vocab: Vocab | None = None,
                 block_size: int | None = None) -> Dataset:
    """Load, build (or reuse) the vocabulary, split and encode."""
    path = Path(path) if path is not None else paths.default_dataset()
    items: Items = read_items(path)
    if len(items) < MIN_ITEMS:
        raise _too_few(path, len(items))
    if vocab is None:
        vocab = Vocab.from_words(WordList(items.points, items.starts, items.lengths, present=items.alphabet))
    tokens = vocab.ids_of(items.points, f"{path}: ")
    starts, n_chars = items.starts, items.lengths
    del items  # the code points: the ids replace them
    longest = int(n_chars.max())
    block_size = block_size or auto_block_size(longest)
    order = split_order(len(n_chars), seed)
    # Put the words in split order once; each split is then a slice (a view), not a copy.
    starts = starts[order]
    n_chars = n_chars[order]
    del order
    n_train, n_val, _ = split_sizes(len(n_chars))
    train, val, test = (EncodedSplit.from_arrays(tokens, starts[cut], n_chars[cut], vocab, block_size)
                        for cut in (slice(0, n_train), slice(n_train, n_train + n_val),
                                    slice(n_train + n_val, None)))
    splits = Splits(train.words, val.words, test.words)
    return Dataset(words=Chained(splits.train, splits.val, splits.test), vocab=vocab, splits=splits, block_size=block_size,
                   train=train, val=val, test=test, source=str(path),
                   cut_items=int(np.count_nonzero(n_chars > block_size - 1)), longest=longest)
