"""Text from files and models made safe to show on a terminal.

A dataset line, a generated name, an imported card, a run folder's name or a status file's error
message can hold control characters. Written raw, ``ESC ] 52`` rewrites the clipboard, ``ESC ] 0``
the window title, ``CSI 2 J`` clears the screen, and a carriage return overwrites what a line
seemed to say. Every such string passes through :func:`printable` before it reaches the terminal,
in the CLI and in the app; the app's markup strings use :func:`markup_escape` on top.

Nothing is removed, only made visible, so a learner can still see (and fix) what the file holds:
C0 controls become the matching symbol of the U+2400 block (ESC shows as ``␛``), DEL as ``␡``;
C1 controls, Unicode line separators, lone surrogates (bytes that were not UTF-8 in a file name)
and every format character (Unicode category Cf: the bidirectional marks, embeddings, overrides
and isolates, zero-width spaces and joiners, the byte-order mark, invisible operators, the tag
characters) become backslash escapes such as ``\\x9b``, ``\\u202e`` or ``\\U000e0041``. A name
that looks like ``report`` but holds U+200B, or a line that U+200F reorders, shows as it is.

Displayed prose (a card's sides) passes ``prose=True``: it keeps the two joiners that scripts and
emoji sequences need (ZWNJ U+200C in Persian words, ZWJ U+200D inside an emoji sequence);
listings, paths and echoes never do.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Characters that move the cursor, start an escape sequence, break a line where Python or a
# terminal would, or reorder the text around them.
_UNSAFE = (
    "\x00-\x1f\x7f-\x9f"  # C0, DEL, C1 (0x9b alone is a CSI on many terminals)
    "\u2028\u2029"  # line and paragraph separators: str.splitlines breaks on them
    "\u202a-\u202e\u2066-\u2069"  # bidirectional embeddings, overrides and isolates
    "\ud800-\udfff"  # lone surrogates: os.fsdecode's stand-ins for bytes that are not UTF-8
    "\U000e0000-\U000e007f"  # the tag block, assigned (Cf) or not yet: invisible either way
)
PROSE_JOINERS = "\u200c\u200d"  # ZWNJ and ZWJ: format characters that text in some scripts needs
# Format characters (Cf) sit in planes 0, 1 and 14 in every Unicode version so far; scanning those
# at first use takes ~20 ms, the whole range ~250 ms (tests/hostile/test_invisible_characters.py
# checks the whole range against this).
_FORMAT_PLANES = (range(0x20000), range(0xE0000, 0xF0000))


@lru_cache(maxsize=1)
def _format_characters() -> str:
    """Every format character (category Cf) of this Python's Unicode, as a regex class's ranges."""
    codes = [c for plane in _FORMAT_PLANES for c in plane if unicodedata.category(chr(c)) == "Cf"]
    ranges, start = [], None
    for i, c in enumerate(codes):
        start = c if start is None else start
        if i + 1 == len(codes) or codes[i + 1] != c + 1:
            ranges.append(re.escape(chr(start)) + ("" if c == start else "-" + re.escape(chr(c))))
            start = None
    return "".join(ranges)


def _visible(ch: str) -> str:
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ … ␟
    if code == 0x7F:
        return "\u2421"  # ␡
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"  # the byte the file name really held
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


# The unsafe characters an ASCII string can hold: no format character is ASCII, so such a string
# (most of what the app escapes) never needs the Cf scan, which then stays off the first frame.
_ASCII_UNSAFE = "\x00-\x1f\x7f"


@lru_cache(maxsize=32)
def _pattern(keep: str, ascii_only: bool = False) -> re.Pattern[str]:
    allowed = "".join(re.escape(c) for c in sorted(set(keep)))
    unsafe = _ASCII_UNSAFE if ascii_only else _UNSAFE + _format_characters()
    if not allowed:
        return re.compile(f"[{unsafe}]")
    return re.compile(f"(?![{allowed}])[{unsafe}]")


def printable(text: object, *, keep: str = "", prose: bool = False) -> str:
    """``text`` with every control and format character made visible; ``keep`` lists the ones to
    let through, ``prose=True`` adds the joiners displayed prose needs (:data:`PROSE_JOINERS`).

    ``keep="\\n"`` suits a multi-line message, ``keep="\\n\\t"`` program output shown as a block.
    Anything not a string is converted with ``str`` first, so a path or an exception can be given.
    """
    text = str(text)
    pattern = _pattern(keep + PROSE_JOINERS if prose else keep, text.isascii())
    return pattern.sub(lambda m: _visible(m.group()), text)


def markup_escape(text: object, *, keep: str = "\n\t", prose: bool = False) -> str:
    """:func:`printable`, then safe to put inside Textual content markup (``Static``, ``notify``).

    Newlines and tabs are kept by default: Textual lays them out itself, they never reach the
    terminal as such; pass ``keep=""`` where a string must stay on one line.

    Textual treats every ``[`` after a backslash as literal, so escaping each ``[`` is enough; a
    trailing backslash would escape the caller's next tag, so a zero-width space follows it.
    (Rich console markup, as in ``DataTable`` string cells, is another dialect: pass a
    ``rich.text.Text`` of :func:`printable` there instead of markup.)
    """
    escaped = printable(text, keep=keep, prose=prose).replace("[", "\\[")
    return escaped + "\u200b" if escaped.endswith("\\") else escaped


def has_control(text: str) -> bool:
    """Whether ``text`` holds a character :func:`printable` would change (with nothing kept)."""
    return _pattern("", text.isascii()).search(text) is not None
