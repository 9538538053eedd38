"""Reading a one-item-per-line text file into arrays, with a clear refusal for what cannot work.

A list of Python strings costs ~60 bytes an item, so a 200 MB file of names became gigabytes
before training started. Here a file is read in chunks of a few megabytes and kept as one array
of code points (1, 2 or 4 bytes a character, the fewest that hold the file's largest) plus each
item's start and length (4 bytes each): about twice the file's size. The items are exactly
``[line.strip() for line in text.splitlines() if line.strip()]``, computed with NumPy.

Refused, each with the file (and line) named: a path that is missing, a folder or not a regular
file (a FIFO or ``/dev/zero`` would never end), a file over :data:`MAX_FILE_BYTES`, an empty file,
a NUL byte (binary data), bytes that are not UTF-8, the reserved ``.`` in an item.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from minigpt import guarded
from minigpt.errors import DatasetError, UnsafeFileError

BOUNDARY = "."  # start and end token, never inside an item
MAX_FILE_BYTES = guarded.DATASET_BYTES  # 1 GiB: far beyond what the tutor's models learn from on a laptop
CHUNK_BYTES = 1 << 23  # read 8 MiB at a time (cut at a newline, so UTF-8 never splits)

# The characters str.splitlines breaks on, and those str.strip removes (all below U+3001).
LINE_BREAKS = np.array([0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x85, 0x2028, 0x2029])
_SPACE_TABLE = np.array([chr(c).isspace() for c in range(0x3001)])
_BREAK_TABLE = np.zeros(0x3001, dtype=bool)
_BREAK_TABLE[LINE_BREAKS] = True


@dataclass
class Items:
    """Items as code points: item ``i`` is ``points[starts[i] : starts[i] + lengths[i]]``."""

    points: np.ndarray  # uint8, uint16 or uint32
    starts: np.ndarray  # int32 (a file is at most 1 GiB)
    lengths: np.ndarray  # int32, characters (never 0)
    alphabet: np.ndarray  # the distinct code points, sorted

    def __len__(self) -> int:
        return len(self.lengths)


class WordList(Sequence[str]):
    """A read-only list of items decoded on demand from compact arrays.

    ``symbols`` holds code points (``alphabet`` None) or indices into ``alphabet``; ``starts`` and
    ``lengths`` say where each item is. Compares equal to a list of the same strings.
    """

    def __init__(self, symbols: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
                 alphabet: tuple[str, ...] | None = None, present: np.ndarray | None = None):
        self._symbols, self._starts, self._lengths, self._alphabet = symbols, starts, lengths, alphabet
        self.present = present  # code-point lists from read_items: the distinct ones, sorted

    def __len__(self) -> int:
        return len(self._lengths)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("WordList index out of range")
        start = int(self._starts[index])
        return _decode(self._symbols[start : start + int(self._lengths[index])], self._alphabet)

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other) -> bool:
        if isinstance(other, (WordList, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __add__(self, other) -> list[str]:
        return list(self) + list(other)

    def __repr__(self) -> str:
        head = ", ".join(repr(w) for w in self[:5])
        return f"WordList([{head}{', …' if len(self) > 5 else ''}], {len(self)} items)"

    @property
    def lengths(self) -> np.ndarray:
        """Each item's length in characters."""
        return self._lengths


def _decode(symbols: np.ndarray, alphabet: tuple[str, ...] | None) -> str:
    if alphabet is not None:
        return "".join(alphabet[t] for t in symbols.tolist())
    if symbols.dtype == np.uint8:
        return symbols.tobytes().decode("latin-1")
    return symbols.astype("<u4").tobytes().decode("utf-32-le")


def open_dataset(path: Path):
    """The dataset opened through the one guard (``minigpt.guarded``): a regular file (a FIFO or
    ``/dev/zero`` would never end), at most MAX_FILE_BYTES, opened without blocking."""
    try:
        return guarded.open_file(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise DatasetError(f"{path}: is a folder, expected a text file") from None
    except UnsafeFileError as e:
        if not e.too_large:
            raise DatasetError(f"{path}: {e.strerror}; give a text file") from None
        raise DatasetError(f"{path}: {e.strerror}; train on a sample of the file") from None
    except OSError as e:
        raise DatasetError(f"{path}: cannot read ({e.strerror or e})") from None


def check_file(path: Path) -> None:
    """Refuse, with a DatasetError naming ``path``, what no reader should open: a missing path, a
    folder, a device or pipe (reading ``/dev/zero`` never ends), a file over MAX_FILE_BYTES."""
    open_dataset(path).close()


def _chunks(path: Path) -> Iterator[tuple[bytes, int]]:
    """The file in pieces that end at a newline, each with its offset in the file."""
    with open_dataset(path) as f:
        rest, offset = b"", 0
        while True:
            try:
                block = f.read(CHUNK_BYTES)
            except OSError as e:
                raise DatasetError(f"{path}: cannot read ({e.strerror or e})") from None
            if not block:
                break
            block = rest + block
            cut = block.rfind(b"\n") + 1
            if cut == 0:  # no newline yet: a long line keeps growing
                rest = block
                continue
            yield block[:cut], offset
            offset += cut
            rest = block[cut:]
        if rest:
            yield rest, offset


def _line_at(path: Path, offset: int) -> int:
    """The 1-based line holding byte ``offset`` (counted only when an error needs it)."""
    with open_dataset(path) as f:
        return f.read(offset).count(b"\n") + 1


def _code_points(chunk: bytes, path: Path, offset: int) -> np.ndarray:
    if b"\x00" in chunk:
        at = _line_at(path, offset + chunk.index(b"\x00"))
        raise DatasetError(f"{path}: line {at} contains a NUL byte; this looks like a binary file, not text")
    if chunk.isascii():
        return np.frombuffer(chunk, dtype=np.uint8)
    try:
        text = chunk.decode("utf-8")
    except UnicodeDecodeError as e:
        at = _line_at(path, offset + e.start)
        raise DatasetError(
            f"{path}: line {at} is not valid UTF-8 (byte 0x{chunk[e.start]:02x}); save the file as UTF-8"
        ) from None
    points = np.frombuffer(text.encode("utf-32-le"), dtype="<u4")
    top = int(points.max())
    return points.astype(np.uint8 if top < 0x100 else np.uint16 if top < 0x10000 else np.uint32)


def _mask(points: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``table[points]`` for a table over U+0000..U+3000, looking only at the few candidates."""
    maybe = np.flatnonzero((points <= 0x20) | (points >= 0x85))  # every break and space is here
    values = points[maybe]
    small = values < len(table)
    out = np.zeros(len(points), dtype=bool)
    out[maybe[small]] = table[values[small]]
    return out


def split_items(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(start, length) of each stripped, non-blank line of ``points`` (vectorised splitlines)."""
    breaks = np.flatnonzero(_mask(points, _BREAK_TABLE))
    line_starts = np.concatenate(([0], breaks + 1))
    line_ends = np.concatenate((breaks, [len(points)]))
    solid = np.flatnonzero(~_mask(points, _SPACE_TABLE))  # breaks are whitespace too
    first = np.searchsorted(solid, line_starts)  # index into solid of each line's first solid char
    last = np.searchsorted(solid, line_ends) - 1
    keep = first <= last  # a blank line has no solid character in [start, end)
    if not keep.any():
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32)
    begin, end = solid[first[keep]], solid[last[keep]] + 1
    return begin, (end - begin).astype(np.int32)


_OTHER_SPACE = (b" ", b"\t", b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\x1f")


def _plain_lines(chunk: bytes) -> tuple[bytes, np.ndarray] | None:
    """The fast path for ASCII with no whitespace but line ends: (characters, item lengths)."""
    if any(c in chunk for c in _OTHER_SPACE):
        return None
    if b"\r" in chunk:
        if chunk.count(b"\r") != chunk.count(b"\r\n"):
            return None
        chunk = chunk.replace(b"\r\n", b"\n")
    ends = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 0x0A)
    lengths = np.diff(ends, prepend=-1) - 1
    if not chunk.endswith(b"\n"):
        lengths = np.append(lengths, len(chunk) - 1 - (ends[-1] if len(ends) else -1))
    return chunk.translate(None, b"\n"), lengths[lengths > 0].astype(np.int32)


def _items_of(chunk: bytes, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The characters of every item in ``chunk`` (concatenated) and each item's length."""
    plain = _plain_lines(chunk) if points.dtype == np.uint8 and chunk.isascii() else None
    if plain is not None:
        return np.frombuffer(plain[0], dtype=np.uint8), plain[1]
    begin, length = split_items(points)
    inside = np.zeros(len(points) + 1, dtype=np.int8)
    inside[begin], inside[begin + length] = 1, -1  # all distinct: items never touch
    return points[np.cumsum(inside[:-1], dtype=np.int8).astype(bool)], length


class _Growing:
    """An array filled from the front; its pages cost memory only once written."""

    def __init__(self, capacity: int, dtype):
        self.array, self.size = np.empty(capacity, dtype=dtype), 0

    def add(self, values: np.ndarray) -> None:
        needed = self.size + len(values)
        wider = values.dtype.itemsize > self.array.dtype.itemsize  # a wider character than so far
        if wider or needed > len(self.array):  # (or the file grew while it was read)
            bigger = np.empty(max(needed, len(self.array)), dtype=np.result_type(self.array, values))
            bigger[: self.size] = self.array[: self.size]
            self.array = bigger
        self.array[self.size : self.size + len(values)] = values
        self.size += len(values)

    def done(self) -> np.ndarray:
        self.array.resize(self.size, refcheck=False)  # shrinks in place
        return self.array


def read_items(path: Path | str) -> Items:
    """Every non-blank line of ``path``, stripped, as code points (see the module's refusals)."""
    path = Path(path)
    capacity = max(path.stat().st_size, 1) if guarded.is_regular(path) else 1
    points_out = _Growing(capacity, np.uint8)
    lengths_out = _Growing(capacity // 2 + 1, np.int32)  # an item takes a character and a break
    present: set[int] = set()
    first = True
    for chunk, offset in _chunks(path):
        points = _code_points(chunk, path, offset)
        if first and len(points) and points[0] == 0xFEFF:  # a byte-order mark is not part of the data
            points, chunk = points[1:], chunk[3:]
        first = False
        dots = np.flatnonzero(points == ord(BOUNDARY)) if BOUNDARY.encode() in chunk else ()
        if len(dots):
            at = _line_at(path, offset) + int(np.count_nonzero(points[: dots[0]] == 0x0A))
            raise DatasetError(
                f"{path}: line {at} contains {BOUNDARY!r}, which is reserved as the start/end token")
        chars, lengths = _items_of(chunk, points)
        if chars.dtype == np.uint8:  # deleting the characters already seen is the quickest test
            if chars.tobytes().translate(None, bytes(sorted(c for c in present if c < 256))):
                present.update(np.flatnonzero(np.bincount(chars, minlength=1)).tolist())
        else:
            present.update(np.unique(chars).tolist())
        points_out.add(chars)
        lengths_out.add(lengths)
    if first:
        raise DatasetError(f"{path}: the file is empty; expected one item per line")
    lengths = lengths_out.done()
    if not len(lengths):
        raise DatasetError(f"{path}: no usable line (every line is blank)")
    starts = np.zeros(len(lengths), dtype=np.int32)
    np.cumsum(lengths[:-1], out=starts[1:])
    return Items(points_out.done(), starts, lengths, np.array(sorted(present), dtype=np.uint32))
