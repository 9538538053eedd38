"""Load the lesson chapters (their snippets run in ``minigpt.snippets``).

A lesson is a Markdown file with TOML front matter between two ``+++`` lines. Its body may hold two
special fenced blocks: ```` ```example ```` (one example id, replaced at display time by
``minigpt.teaching.examples.registry.render_example``) and ```` ```python runnable ```` (code the app runs and whose
output it shows). This module never imports Textual, so the tests and the CLI can use it directly.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from minigpt import guarded, paths
from minigpt.errors import LessonError

REQUIRED = {"id": str, "title": str, "order": int}
LIST_FIELDS = ("objectives", "tags")

# A fence opens with three or more backticks and an info string; it closes with a line of at least
# as many backticks and nothing else. Tracking the length lets a snippet contain ``` in a string.
_FENCE = re.compile(r"^(`{3,})([^`]*)$")



@dataclass(frozen=True)
class Block:
    kind: str  # "markdown", "example" or "runnable"
    text: str


@dataclass
class Lesson:
    id: str
    title: str
    order: int
    objectives: list[str]
    tags: list[str]
    body: str
    path: Path | None = None
    extra: dict = field(default_factory=dict)  # unknown front-matter keys, kept for forward use

    def blocks(self) -> list[Block]:
        return split_blocks(self.body)

    def example_ids(self) -> list[str]:
        return [b.text for b in self.blocks() if b.kind == "example"]

    def snippets(self) -> list[str]:
        return [b.text for b in self.blocks() if b.kind == "runnable"]


def split_blocks(body: str) -> list[Block]:
    """Cut a lesson body into Markdown runs, example references and runnable snippets.

    Ordinary fenced code (```python without ``runnable``) stays inside the Markdown run so the
    Markdown widget renders it as code.
    """
    blocks: list[Block] = []
    md: list[str] = []
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i].rstrip())
        if not m:
            md.append(lines[i])
            i += 1
            continue
        ticks, info = m.group(1), m.group(2).strip().split()
        j = i + 1
        while j < len(lines) and not (
            lines[j].strip().startswith(ticks) and set(lines[j].strip()) == {"`"}
        ):
            j += 1
        inner = lines[i + 1 : j]
        kind = None
        if info[:1] == ["example"]:
            kind = "example"
        elif len(info) >= 2 and info[0] == "python" and "runnable" in info[1:]:
            kind = "runnable"
        if kind is None:
            md.extend(lines[i : j + 1])
        else:
            _flush(blocks, md)
            text = "\n".join(inner).strip() if kind == "example" else "\n".join(inner) + "\n"
            blocks.append(Block(kind, text))
        i = j + 1
    _flush(blocks, md)
    return blocks


def _flush(blocks: list[Block], md: list[str]) -> None:
    text = "\n".join(md).strip("\n")
    if text.strip():
        blocks.append(Block("markdown", text))
    md.clear()


def parse_lesson(text: str, path: Path | None = None) -> Lesson:
    where = str(path) if path else "<lesson>"
    lines = text.splitlines()
    if not lines or lines[0].strip() != "+++":
        raise LessonError(f"{where}: front matter must start with a '+++' line")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "+++")
    except StopIteration:
        raise LessonError(f"{where}: front matter has no closing '+++' line") from None
    try:
        meta = tomllib.loads("\n".join(lines[1:end]))
    except tomllib.TOMLDecodeError as e:
        raise LessonError(f"{where}: front matter is not valid TOML: {e}") from None
    for key, typ in REQUIRED.items():
        if key not in meta:
            raise LessonError(f"{where}: front matter is missing '{key}'")
        # bool is an int subclass; an order of `true` is a typo, not a number.
        if not isinstance(meta[key], typ) or isinstance(meta[key], bool):
            raise LessonError(f"{where}: '{key}' must be a {typ.__name__}")
    if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", meta["id"]):
        raise LessonError(f"{where}: id {meta['id']!r} must be a lowercase slug like 'kv-cache'")
    for key in LIST_FIELDS:
        value = meta.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise LessonError(f"{where}: '{key}' must be a list of strings")
    body = "\n".join(lines[end + 1 :]).strip("\n") + "\n"
    known = set(REQUIRED) | set(LIST_FIELDS)
    return Lesson(
        id=meta["id"], title=meta["title"], order=meta["order"],
        objectives=list(meta.get("objectives", [])), tags=list(meta.get("tags", [])),
        body=body, path=path, extra={k: v for k, v in meta.items() if k not in known},
    )


def default_directory() -> Path:
    return paths.lessons_dir() / "chapters"


def load_lessons(directory: Path | str | None = None) -> list[Lesson]:
    """Every ``*.md`` lesson in ``directory``, sorted by ``order``; ids and orders must be unique."""
    directory = Path(directory) if directory is not None else default_directory()
    if not directory.is_dir():
        raise LessonError(f"{directory}: lesson folder not found")
    lessons: list[Lesson] = []
    seen_ids: dict[str, Path] = {}
    seen_orders: dict[int, Path] = {}
    for path in sorted(directory.glob("*.md")):
        try:
            text = guarded.read_text(path, guarded.TEXT_FILE_BYTES)
        except (OSError, UnicodeDecodeError) as e:
            raise LessonError(f"{path}: cannot read lesson: {e}") from None
        lesson = parse_lesson(text, path)
        if lesson.id in seen_ids:
            raise LessonError(f"{path}: id '{lesson.id}' is already used by {seen_ids[lesson.id]}")
        if lesson.order in seen_orders:
            raise LessonError(
                f"{path}: order {lesson.order} is already used by {seen_orders[lesson.order]}"
            )
        seen_ids[lesson.id] = path
        seen_orders[lesson.order] = path
        lessons.append(lesson)
    return sorted(lessons, key=lambda l: l.order)


def lesson_by_id(lesson_id: str, directory: Path | str | None = None) -> Lesson:
    for lesson in load_lessons(directory):
        if lesson.id == lesson_id:
            return lesson
    raise KeyError(f"no lesson with id {lesson_id!r}")
