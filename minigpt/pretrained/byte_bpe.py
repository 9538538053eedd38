"""GPT-2's byte-level BPE, read from a checkpoint's ``vocab.json`` and ``merges.txt``.

Three steps turn text into ids, as GPT-2's own encoder does:

1. **Pieces.** The text is cut where GPT-2's pattern cuts it: an English contraction (``'s``,
   ``'t``, ``'re``, ``'ve``, ``'m``, ``'ll``, ``'d``); a run of letters, of numbers or of other
   symbols, each with at most one space in front; a run of whitespace, which leaves its last
   space to the word after it. Merges never cross a piece. :func:`pieces` scans by Unicode
   category, so no third-party regex module is needed for ``\\p{L}`` and ``\\p{N}``.
2. **Bytes as characters.** Each piece's UTF-8 bytes become 256 printable stand-in characters
   (:func:`byte_alphabet`: printable bytes stand for themselves, the rest are moved above
   U+0100, so a space is ``Ġ``): every text has a spelling in the vocabulary, nothing is unknown.
3. **Merges.** In each piece, the adjacent pair learned earliest (lowest line of ``merges.txt``)
   is merged, everywhere in the piece, until no learned pair is left.

``tokenizers`` and ``transformers`` are the test oracles (tests/test_pretrained_gpt2.py); the app
never imports them. Special tokens such as ``<|endoftext|>`` are not looked for in the text:
typed text is encoded as plain text. Torch-free.
"""

from __future__ import annotations

import json
import unicodedata
from functools import lru_cache
from pathlib import Path

from minigpt import guarded
from minigpt.errors import CheckpointError, UnsafeFileError
from minigpt.tokenizer import shown_piece

VOCAB_FILE, MERGES_FILE = "vocab.json", "merges.txt"
MAX_TOKENS = 1_000_000  # far beyond any GPT-2-family vocabulary (50,257)
CONTRACTIONS = ("'s", "'t", "'re", "'ve", "'m", "'ll", "'d")
# Unicode's White_Space property: what the pattern's \s matches.
WHITESPACE = frozenset("\t\n\v\f\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000"
                       + "".join(chr(c) for c in range(0x2000, 0x200B)))


@lru_cache(maxsize=1)
def byte_alphabet() -> dict[int, str]:
    """Byte → the character that stands for it in GPT-2's vocabulary."""
    kept = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table, moved = {b: chr(b) for b in kept}, 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + moved)
            moved += 1
    return table


def _kind(ch: str) -> str:
    """"s" whitespace, "L" letter, "N" number, "P" anything else."""
    if ch in WHITESPACE:
        return "s"
    category = unicodedata.category(ch)[0]
    return category if category in "LN" else "P"


def pieces(text: str) -> list[str]:
    """``text`` cut as GPT-2's pattern cuts it (first alternative that matches, at each place)."""
    out, i, n = [], 0, len(text)
    kinds = [_kind(c) for c in text]
    while i < n:
        contraction = next((c for c in CONTRACTIONS if text.startswith(c, i)), None)
        if contraction:
            out.append(contraction)
            i += len(contraction)
            continue
        body = i + 1 if text[i] == " " and i + 1 < n and kinds[i + 1] != "s" else i
        if kinds[body] != "s":  # a run of one kind, with at most one space in front
            j = body + 1
            while j < n and kinds[j] == kinds[body]:
                j += 1
            out.append(text[i:j])
            i = j
            continue
        j = i
        while j < n and kinds[j] == "s":
            j += 1
        # \s+(?!\S): a run followed by a non-space leaves its last character to that word,
        # unless the run is that one character (then \s+ takes it alone).
        end = j if j == n or j - i == 1 else j - 1
        out.append(text[i:end])
        i = end
    return out


class ByteLevelBPE:
    """GPT-2's tokenizer: ``vocab`` maps tokens (in the byte alphabet) to ids, ``ranks`` each
    learned pair to its line in ``merges.txt``."""

    def __init__(self, vocab: dict[str, int], merges: list[tuple[str, str]]):
        self.vocab = vocab
        self.ranks = {pair: rank for rank, pair in enumerate(merges)}
        self.tokens = {i: t for t, i in vocab.items()}
        self.byte_of = {c: b for b, c in byte_alphabet().items()}
        self._encode_piece = lru_cache(maxsize=65536)(self._encode_piece_uncached)

    @property
    def size(self) -> int:
        return max(self.tokens) + 1

    def _encode_piece_uncached(self, piece: str) -> tuple[int, ...]:
        table = byte_alphabet()
        symbols = [table[b] for b in piece.encode("utf-8", "surrogatepass")]
        while len(symbols) > 1:
            ranked = [(self.ranks.get(pair, -1), k) for k, pair in enumerate(zip(symbols, symbols[1:]))]
            best = min((r for r in ranked if r[0] >= 0), default=None)
            if best is None:
                break
            pair, merged, k = (symbols[best[1]], symbols[best[1] + 1]), [], 0
            while k < len(symbols):
                if k + 1 < len(symbols) and (symbols[k], symbols[k + 1]) == pair:
                    merged.append(pair[0] + pair[1])
                    k += 2
                else:
                    merged.append(symbols[k])
                    k += 1
            symbols = merged
        try:
            return tuple(self.vocab[s] for s in symbols)
        except KeyError as e:
            raise ValueError(f"the vocabulary has no token {e.args[0]!r} (vocab.json and merges.txt disagree)") from None

    def encode(self, text: str) -> list[int]:
        return [i for piece in pieces(text) for i in self._encode_piece(piece)]

    def token_bytes(self, token_id: int) -> bytes:
        return bytes(self.byte_of.get(c, 0x3F) for c in self.tokens.get(int(token_id), "?"))

    def piece(self, token_id: int) -> str:
        return shown_piece(self.token_bytes(token_id).decode("utf-8", "replace"))

    def decode(self, ids) -> str:
        return b"".join(self.token_bytes(i) for i in ids).decode("utf-8", "replace")


def read_folder_json(path: Path) -> dict:
    """A JSON object file of a GPT-2 folder (config.json, vocab.json), through the guarded reader;
    one CheckpointError naming the file at fault."""
    try:
        data = json.loads(guarded.read_text(path, guarded.CHECKPOINT_JSON_BYTES))
    except FileNotFoundError:
        raise CheckpointError(f"{path.parent}: {path.name} is missing (a GPT-2 folder holds config.json, "
                              f"model.safetensors, vocab.json and merges.txt)") from None
    except UnsafeFileError as e:
        raise CheckpointError(f"{path}: {e.strerror}") from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
        raise CheckpointError(f"{path}: not readable JSON ({getattr(e, 'strerror', None) or e})") from None
    if not isinstance(data, dict):
        raise CheckpointError(f"{path}: not a JSON object")
    return data


def load_byte_bpe(folder: Path | str) -> ByteLevelBPE:
    """The tokenizer of a GPT-2-format folder; one CheckpointError naming the file at fault."""
    folder = Path(folder)
    vocab = read_folder_json(folder / VOCAB_FILE)
    if not vocab or len(vocab) > MAX_TOKENS or not all(
            isinstance(i, int) and not isinstance(i, bool) and 0 <= i < MAX_TOKENS for i in vocab.values()):
        raise CheckpointError(f"{folder / VOCAB_FILE}: not a token → id table (ids from 0 to {MAX_TOKENS:,})")
    try:
        lines = guarded.read_text(folder / MERGES_FILE, guarded.TEXT_FILE_BYTES).split("\n")
    except FileNotFoundError:
        raise CheckpointError(f"{folder}: {MERGES_FILE} is missing (a GPT-2 folder holds config.json, "
                              f"model.safetensors, vocab.json and merges.txt)") from None
    except UnsafeFileError as e:
        raise CheckpointError(f"{folder / MERGES_FILE}: {e.strerror}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise CheckpointError(f"{folder / MERGES_FILE}: cannot be read ({getattr(e, 'strerror', None) or e})") from None
    merges = []
    for number, line in enumerate(lines, 1):
        if not line or (number == 1 and line.startswith("#version")):
            continue
        pair = line.removesuffix("\r").split(" ")
        if len(pair) != 2 or not all(pair):
            raise CheckpointError(f"{folder / MERGES_FILE}: line {number} is not two tokens with a space between")
        merges.append((pair[0], pair[1]))
    missing = [t for t in byte_alphabet().values() if t not in vocab]
    if missing:
        raise CheckpointError(f"{folder / VOCAB_FILE}: lacks {len(missing)} of the 256 byte tokens (not a byte-level BPE)")
    return ByteLevelBPE(vocab, merges)
