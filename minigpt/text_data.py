"""One long text in, windows out: character-level training on any UTF-8 file (a book, code).

Names are separate items (``minigpt.data``); a text is one stream. The vocabulary is the text's
characters; the first 90% of the text trains and the last 10% validates, each a contiguous
stretch, so no validation window overlaps training text. A training batch is random windows of
``block_size + 1`` characters (inputs and the same shifted by one as targets, so every position
predicts); evaluation uses a fixed set of non-overlapping windows, so two evaluations of one
model give the same number. A text has no third split: its "test" is the validation stretch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import torch

from minigpt.corpus import MAX_FILE_BYTES, open_dataset
from minigpt.data import BOUNDARY, Vocab
from minigpt.errors import DatasetError

TRAIN_FRACTION = 0.9
MAX_EVAL_WINDOWS = 2048  # a fixed, bounded evaluation set: enough for a stable mean


def load_text(path: Path | str) -> str:
    """The whole file as text, with a clear error for what cannot be trained on."""
    path = Path(path)
    try:
        with open_dataset(path) as f:  # not a device, a pipe or a folder; not over the size limit
            raw = f.read(MAX_FILE_BYTES)
    except OSError as e:
        raise DatasetError(f"{path}: cannot read ({e.strerror})") from None
    if not raw.strip():
        raise DatasetError(f"{path}: the file is empty")
    if b"\x00" in raw:
        raise DatasetError(f"{path}: contains NUL bytes; this looks like a binary file, not text")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise DatasetError(f"{path}: line {line} is not valid UTF-8 (byte 0x{raw[e.start]:02x}); "
                           f"save the file as UTF-8") from None


def text_vocab(text: str) -> Vocab:
    """Every character of the text. Index 0 stays ``.`` (the vocabulary's fixed first symbol);
    in a text it is an ordinary character, never an end-of-item marker."""
    return Vocab((BOUNDARY, *sorted(set(text) - {BOUNDARY})))


class WindowSplit:
    """A contiguous stretch of token ids served as windows: x = ids[s:s+T], y = ids[s+1:s+T+1]."""

    def __init__(self, ids: torch.Tensor, block_size: int, starts: torch.Tensor | None = None):
        self.ids, self.block_size = ids, block_size
        n_windows = len(ids) - block_size
        if n_windows < 1:
            raise DatasetError(f"a stretch of {len(ids)} characters holds no window of {block_size + 1}")
        # Training samples any start; evaluation passes a fixed set of starts.
        self.starts = torch.arange(n_windows) if starts is None else starts
        self.lengths = torch.full((len(self.starts),), block_size, dtype=torch.long)

    def __len__(self) -> int:
        return len(self.starts)

    def batch(self, index: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        offsets = self.starts[index][:, None] + torch.arange(self.block_size + 1)[None, :]
        windows = self.ids[offsets]
        return windows[:, :-1], windows[:, 1:]

    @classmethod
    def for_evaluation(cls, ids: torch.Tensor, block_size: int) -> WindowSplit:
        """Non-overlapping windows from the start of the stretch, evenly thinned to a bound."""
        starts = torch.arange(0, len(ids) - block_size, block_size)
        if len(starts) > MAX_EVAL_WINDOWS:
            starts = starts[torch.linspace(0, len(starts) - 1, MAX_EVAL_WINDOWS).long()]
        return cls(ids, block_size, starts)


@dataclass
class TextDataset:
    text_chars: int
    vocab: Vocab
    block_size: int
    train: WindowSplit
    val: WindowSplit
    test: WindowSplit  # the validation stretch: a text has no third split
    source: str
    words: list[str] = field(default_factory=list)  # names only; kept so callers need no branch
    data_format: str = "text"

    def split(self, name: str) -> WindowSplit:
        return {"train": self.train, "val": self.val, "test": self.test}[name]

    def membership(self, _text: str) -> str:
        return "new"  # "in training" marks belong to names, not to stretches of text


def load_text_dataset(path: Path | str, block_size: int | None = None, vocab: Vocab | None = None
                      ) -> TextDataset:
    text = load_text(path)
    vocab = vocab or text_vocab(text)
    missing = vocab.unknown(text)
    if missing:
        raise DatasetError(f"{path}: characters {''.join(missing)!r} are not in the model's vocabulary")
    block_size = block_size or 64
    cut = int(TRAIN_FRACTION * len(text))
    need = 10 * (block_size + 1)  # so the last 10% still holds one window
    if len(text) < need:
        raise DatasetError(f"{path}: {len(text):,} characters is too short for block size {block_size}: "
                           f"a text needs at least {need:,} (its last 10% validates)")
    ids = torch.tensor(vocab.encode(text), dtype=torch.long)
    train, val = ids[:cut], ids[cut:]
    val_split = WindowSplit.for_evaluation(val, block_size)
    return TextDataset(text_chars=len(text), vocab=vocab, block_size=block_size,
                       train=WindowSplit(train, block_size), val=val_split, test=val_split, source=str(path))
