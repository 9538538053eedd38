"""The katas as content: one folder per kata under ``lessons/katas/`` (torch-free).

A folder holds ``meta.toml`` (name, title, order, the lessons it practises, the function to write,
the forbidden calls, hints in the order they are given, what its edge cases must return),
``stub.py`` (the signature and docstring the learner starts from) and ``solution.py`` (the
reference the hidden tests compare with). Adding a kata needs its folder and a checker in
:mod:`minigpt.katas.checkers`; nothing else.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from minigpt import guarded, paths
from minigpt.errors import KataError

_NAME = re.compile(r"[a-z][a-z0-9_]*")


@dataclass(frozen=True)
class Kata:
    name: str
    title: str
    order: int
    lessons: tuple[str, ...]
    function: str
    forbidden: tuple[str, ...]
    hints: tuple[str, ...]
    edge_cases: tuple[str, ...]
    stub: str
    solution: str
    folder: Path

    @property
    def signature(self) -> str:
        """The ``def`` line(s) of the stub, as the learner must keep them."""
        match = re.search(rf"^def {re.escape(self.function)}\(.*?\).*?:$", self.stub, re.M | re.S)
        return match.group(0) if match else f"def {self.function}(…)"

    @property
    def docstring(self) -> str:
        match = re.search(r'"""(.*?)"""', self.stub, re.S)
        return match.group(1).strip() if match else ""


def default_directory() -> Path:
    return paths.lessons_dir() / "katas"


def _strings(meta: dict, key: str, where: Path) -> tuple[str, ...]:
    value = meta.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise KataError(f"{where}: '{key}' must be a list of strings")
    return tuple(value)


def load_kata(folder: Path) -> Kata:
    where = folder / "meta.toml"
    try:
        meta = tomllib.loads(guarded.read_text(where, guarded.TEXT_FILE_BYTES))
        stub = guarded.read_text(folder / "stub.py", guarded.TEXT_FILE_BYTES)
        solution = guarded.read_text(folder / "solution.py", guarded.TEXT_FILE_BYTES)
    except (OSError, UnicodeDecodeError) as e:
        raise KataError(f"{folder}: cannot read the kata: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise KataError(f"{where}: not valid TOML: {e}") from None
    for key, typ in {"name": str, "title": str, "order": int, "function": str}.items():
        if not isinstance(meta.get(key), typ) or isinstance(meta.get(key), bool):
            raise KataError(f"{where}: '{key}' must be a {typ.__name__}")
    if not _NAME.fullmatch(meta["name"]):
        raise KataError(f"{where}: name {meta['name']!r} must be a Python-style lowercase name")
    for text, label in ((stub, "stub.py"), (solution, "solution.py")):
        if not re.search(rf"^def {re.escape(meta['function'])}\(", text, re.M):
            raise KataError(f"{folder / label}: does not define {meta['function']}()")
    return Kata(meta["name"], meta["title"], meta["order"], _strings(meta, "lessons", where),
                meta["function"], _strings(meta, "forbidden", where), _strings(meta, "hints", where),
                _strings(meta, "edge_cases", where), stub, solution, folder)


def load_katas(directory: Path | str | None = None) -> list[Kata]:
    """Every kata folder in ``directory``, by order; names and orders must be unique."""
    directory = Path(directory) if directory is not None else default_directory()
    if not directory.is_dir():
        raise KataError(f"{directory}: kata folder not found")
    katas: list[Kata] = []
    for folder in sorted(p for p in directory.iterdir() if (p / "meta.toml").is_file()):
        kata = load_kata(folder)
        for other in katas:
            if other.name == kata.name or other.order == kata.order:
                raise KataError(f"{folder}: name or order already used by {other.folder.name}")
        katas.append(kata)
    return sorted(katas, key=lambda k: k.order)


def kata_by_name(name: str, directory: Path | str | None = None) -> Kata:
    katas = load_katas(directory)
    for kata in katas:
        if kata.name == name:
            return kata
    raise KataError(f"no kata called {name!r}; `minigpt kata list` shows them "
                    f"({', '.join(k.name for k in katas[:4])}, …)")


def katas_for_lesson(lesson_id: str, katas: list[Kata] | None = None) -> list[Kata]:
    return [k for k in (katas if katas is not None else load_katas()) if lesson_id in k.lessons]
