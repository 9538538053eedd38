"""What every tool needs from a tokenizer, whichever model it serves.

The character vocabulary of the tutor's own models (``minigpt.data.Vocab``) and GPT-2's
byte-level BPE (``minigpt.pretrained.byte_bpe``) both provide it: text to ids, an id to the piece
shown to the learner, an id to the bytes it stands for, and ids back to text. A tool written
against this interface (sampling, per-token surprise) works on either model. Torch-free.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class Tokenizer(Protocol):
    @property
    def size(self) -> int:
        """How many ids there are (the model's vocabulary size)."""

    def encode(self, text: str) -> list[int]:
        """The ids of ``text``; a ``ValueError`` naming what cannot be encoded."""

    def piece(self, token_id: int) -> str:
        """The token as the learner should see it (GPT-2's pieces: a space shows as ``␣``)."""

    def token_bytes(self, token_id: int) -> bytes:
        """The UTF-8 bytes the token stands for (a BPE token may hold part of a character)."""

    def decode(self, ids) -> str:
        """The text of ``ids``: their bytes joined, then read as UTF-8 (bad bytes as U+FFFD)."""


def shown_piece(text: str) -> str:
    """A token's text made visible: spaces as ``␣``, a line break as ``↵``, a tab as ``⇥``."""
    return text.replace(" ", "␣").replace("\n", "↵").replace("\t", "⇥")
