"""DEVELOPING.md stays current: its tree names every module of minigpt/ and tui/."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


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


def test_the_tree_names_every_module():
    tree = expanded(tree_text())
    missing = []
    for package in ("minigpt", "tui"):
        for path in sorted((REPO / package).rglob("*.py")):
            rel = path.relative_to(REPO)
            if path.name == "__init__.py" and path.parent.name not in ("minigpt",):
                name = rel.parent.name + "/"  # a package: its folder is named
            else:
                name = path.name
            if name not in tree:
                missing.append(rel.as_posix())
    assert not missing, f"DEVELOPING.md's tree does not name: {missing}"


def test_a_brace_list_names_each_module():
    assert expanded("and explorer_{scaling,norms}.py, then") == "and explorer_scaling.py, explorer_norms.py, then"
