"""DEVELOPING.md stays current: its tree names every module of minigpt/ and tui/, each under its
own folder (``training/options.py`` is not named by ``study/``'s line saying ``options.py``)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ENTRY_COLUMN_MAX = 6  # an entry starts at column 0, 2 or 4; its description is indented further


def tree_text() -> str:
    text = (REPO / "DEVELOPING.md").read_text(encoding="utf-8")
    return text.split("## The tree", 1)[1].split("\n## ", 1)[0]


def expanded(tree: str) -> str:
    """The tree with ``explorer_{a,b}.py`` spelled out as ``explorer_a.py explorer_b.py``."""
    out = []
    for word in tree.split():
        if "{" in word and "}" in word:
            head, rest = word.split("{", 1)
            names, tail = rest.split("}", 1)
            out += [head + name + tail for name in names.split(",")]
        else:
            out.append(word)
    return " ".join(out)


def entries(tree: str) -> dict[str, set[str]]:
    """Each entry of the tree (``minigpt/``, ``minigpt/training/``, ``minigpt/store.py``) with the
    words of its line and of the description lines under it."""
    block = tree.split("```", 2)[1]
    found: dict[str, set[str]] = {}
    stack: list[tuple[int, str]] = []  # (column, folder path) of the enclosing folders
    current = None
    for line in block.splitlines():
        if not line.strip():
            continue
        column = len(line) - len(line.lstrip(" "))
        if column <= ENTRY_COLUMN_MAX:
            name = line.split()[0]
            while stack and stack[-1][0] >= column:
                stack.pop()
            current = (stack[-1][1] if stack else "") + name
            if name.endswith("/"):
                stack.append((column, current))
            found[current] = set()
            line = line.split(None, 1)[1] if len(line.split(None, 1)) > 1 else ""
        if current is not None:
            found[current] |= {w.strip("(),;:`.'\"") if not w.strip("(),;:`'\"").endswith(".py") else
                               w.strip("(),;:`'\"") for w in expanded(line).split()}
    return found


def named(module: Path, tree_entries: dict[str, set[str]]) -> bool:
    """Whether the tree names this module (a path relative to the repository) under its folder."""
    rel = module.as_posix()
    if rel in tree_entries:
        return True
    folder, name = module.parent.as_posix() + "/", module.name
    if name == "__init__.py":  # a package is named by its folder
        if folder in tree_entries:
            return True
        folder, name = module.parent.parent.as_posix() + "/", module.parent.name + "/"
    # the deepest folder with an entry of its own; deeper folders are named in its text
    inner = []
    while folder not in tree_entries and folder.count("/") > 1:
        inner.insert(0, folder.rstrip("/").rsplit("/", 1)[1] + "/")
        folder = folder.rstrip("/").rsplit("/", 1)[0] + "/"
    words = tree_entries.get(folder, set())
    return name in words and all(part in words for part in inner)


def test_the_tree_names_every_module_under_its_own_folder():
    tree_entries = entries(tree_text())
    missing = [path.relative_to(REPO).as_posix() for package in ("minigpt", "tui")
               for path in sorted((REPO / package).rglob("*.py"))
               if "__pycache__" not in path.parts and not named(path.relative_to(REPO), tree_entries)]
    assert not missing, f"DEVELOPING.md's tree does not name, under their folders: {missing}"


def test_a_module_named_only_under_another_folder_is_missing():
    tree = "```\nminigpt/   the library\n  study/     formats.py (quiz modes)\n  training/  options.py (TrainConfig)\n```\n"
    tree_entries = entries(tree)
    assert named(Path("minigpt/training/options.py"), tree_entries)
    assert not named(Path("minigpt/study/distractors.py"), tree_entries)
    assert named(Path("minigpt/study/__init__.py"), tree_entries)
    assert not named(Path("minigpt/models/__init__.py"), tree_entries)


def test_a_brace_list_names_each_module():
    assert expanded("and explorer_{scaling,norms}.py, then") == "and explorer_scaling.py, explorer_norms.py, then"


def test_entries_follow_the_indentation():
    tree = "```\nminigpt/   lib\n  a.py       x\n  teaching/  b.py,\n             c.py\n    examples/  d.py\ntui/  app\n  e.py  y\n```\n"
    found = entries(tree)
    assert set(found) == {"minigpt/", "minigpt/a.py", "minigpt/teaching/", "minigpt/teaching/examples/", "tui/", "tui/e.py"}
    assert {"b.py", "c.py"} <= found["minigpt/teaching/"] and "d.py" in found["minigpt/teaching/examples/"]
