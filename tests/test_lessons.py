"""The lesson loader, and the shipped lessons themselves (content is data, so it is tested here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from minigpt import lessons
from minigpt.snippets import run_snippet, snippet_command, snippet_env

REPO = Path(__file__).resolve().parents[1]
SEED_OVERLAP = REPO.parent / "shared" / "tools" / "seed_overlap.py"

GOOD = """+++
id = "demo-lesson"
title = "Demo"
order = 5
objectives = ["See a block"]
tags = ["attention"]
+++
Intro text.

```example
attention.course.weights
```

```python
print("plain code stays markdown")
```

````python runnable
print("hi")
s = "```"
````

## Key points
- one
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


# --- the loader ----------------------------------------------------------------------------------


def test_parse_and_blocks(tmp_path):
    write(tmp_path, "a.md", GOOD)
    [lesson] = lessons.load_lessons(tmp_path)
    assert (lesson.id, lesson.title, lesson.order) == ("demo-lesson", "Demo", 5)
    assert lesson.objectives == ["See a block"] and lesson.tags == ["attention"]
    kinds = [b.kind for b in lesson.blocks()]
    assert kinds == ["markdown", "example", "markdown", "runnable", "markdown"]
    assert lesson.example_ids() == ["attention.course.weights"]
    assert "plain code stays markdown" in lesson.blocks()[2].text
    assert 's = "```"' in lesson.snippets()[0]


def test_sorted_by_order(tmp_path):
    write(tmp_path, "z.md", GOOD.replace("order = 5", "order = 1").replace("demo-lesson", "first"))
    write(tmp_path, "a.md", GOOD)
    assert [l.id for l in lessons.load_lessons(tmp_path)] == ["first", "demo-lesson"]


@pytest.mark.parametrize(
    "text, fragment",
    [
        (GOOD.replace('id = "demo-lesson"\n', ""), "missing 'id'"),
        (GOOD.replace("order = 5", 'order = "5"'), "'order' must be a int"),
        (GOOD.replace('title = "Demo"', "title = "), "not valid TOML"),
        (GOOD.replace("+++\nid", "id", 1), "must start"),
        (GOOD.replace('tags = ["attention"]', 'tags = "attention"'), "'tags' must be a list"),
        (GOOD.replace("demo-lesson", "Demo Lesson"), "slug"),
    ],
)
def test_bad_front_matter_names_file(tmp_path, text, fragment):
    write(tmp_path, "bad.md", text)
    with pytest.raises(lessons.LessonError) as e:
        lessons.load_lessons(tmp_path)
    assert "bad.md" in str(e.value) and fragment in str(e.value)


def test_unclosed_front_matter(tmp_path):
    write(tmp_path, "open.md", "+++\nid = 'x'\n")
    with pytest.raises(lessons.LessonError, match="open.md.*closing"):
        lessons.load_lessons(tmp_path)


def test_duplicate_id_and_order(tmp_path):
    write(tmp_path, "a.md", GOOD)
    write(tmp_path, "b.md", GOOD.replace("order = 5", "order = 6"))
    with pytest.raises(lessons.LessonError, match="b.md.*already used"):
        lessons.load_lessons(tmp_path)
    write(tmp_path, "b.md", GOOD.replace("demo-lesson", "other"))
    with pytest.raises(lessons.LessonError, match="order 5"):
        lessons.load_lessons(tmp_path)


def test_missing_folder(tmp_path):
    with pytest.raises(lessons.LessonError, match="not found"):
        lessons.load_lessons(tmp_path / "nope")


def test_run_snippet_ok_error_and_timeout(tmp_path):
    ok = run_snippet("import minigpt.teaching.attention, sys; print('ok', sys.argv[0])")
    assert ok.ok and ok.stdout.startswith("ok")
    bad = run_snippet("raise SystemExit(3)")
    assert bad.returncode == 3 and not bad.ok
    slow = run_snippet("import time; print('start', flush=True); time.sleep(5)", timeout=1)
    assert slow.timed_out and slow.returncode is None and "start" in slow.stdout


def test_snippet_command_imports_minigpt_from_elsewhere(tmp_path):
    cmd = snippet_command("import minigpt.lessons; print('here')")
    assert cmd[0] == sys.executable and "-I" not in cmd
    out = subprocess.run(cmd, cwd=tmp_path, env=snippet_env(), capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "here"


# --- the shipped lessons -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shipped():
    return lessons.load_lessons()


def test_shipped_lessons_parse(shipped):
    assert len(shipped) >= 20
    assert len({l.id for l in shipped}) == len(shipped)
    assert len({l.order for l in shipped}) == len(shipped)
    for lesson in shipped:
        assert lesson.objectives, lesson.path
        assert lesson.tags, lesson.path


def test_every_lesson_ends_with_key_points(shipped):
    for lesson in shipped:
        blocks = lesson.blocks()
        assert blocks and blocks[-1].kind == "markdown", lesson.path
        tail = blocks[-1].text
        assert "## Key points" in tail, lesson.path
        after = tail.split("## Key points", 1)[1]
        assert "\n#" not in after, f"{lesson.path}: Key points must be the last section"
        assert any(line.lstrip().startswith(("- ", "* ")) for line in after.splitlines()), lesson.path


def test_every_example_reference_resolves(shipped):
    from minigpt.teaching.examples.catalog import example_ids

    known = set(example_ids())
    for lesson in shipped:
        for ex in lesson.example_ids():
            assert ex in known, f"{lesson.path}: unknown example {ex!r}"


def test_lines_fit_a_narrow_terminal(shipped):
    # Code and tables are not re-wrapped by the Markdown widget, so keep them readable at 80 columns.
    for lesson in shipped:
        in_code = False
        for n, line in enumerate(lesson.body.splitlines(), 1):
            if line.startswith("```"):
                in_code = not in_code
            if in_code or line.startswith("|"):
                assert len(line) <= 78, f"{lesson.path}:{n} is {len(line)} columns"


# Runs every snippet in ONE interpreter, each in a fresh namespace, so torch is imported once (a
# cold torch import costs seconds, and there are two dozen snippets). How long each one takes is
# measured by benchmarks/bench_snippets.py, not asserted here.
_DRIVER = """
import contextlib, io, json, sys, traceback
import torch
snippets = json.loads(sys.stdin.read())
report = []
for name, code in snippets:
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, name, "exec"), {"__name__": "__main__"})
        err = None
    except BaseException:
        err = traceback.format_exc()
    report.append([name, err, out.getvalue()])
print(json.dumps(report))
"""


def test_every_runnable_snippet_runs(shipped):
    import json

    snippets = [(l.path.name, code) for l in shipped for code in l.snippets()]
    assert snippets
    proc = subprocess.run(
        snippet_command(_DRIVER), input=json.dumps(snippets), capture_output=True, text=True,
        env=snippet_env(), timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(report) == len(snippets)
    for (name, code), (_, err, out) in zip(snippets, report):
        assert err is None, f"{name}: snippet failed\n{code}\n{err}"
        assert out.strip(), f"{name}: snippet printed nothing\n{code}"


def test_one_snippet_runs_as_the_app_runs_it(shipped):
    # The real path: a fresh interpreter per snippet, via run_snippet.
    code = next(c for l in shipped for c in l.snippets())
    res = run_snippet(code, timeout=60)
    assert res.ok, res.stderr


def test_no_verbatim_overlap_with_seeds():
    """Every file of ours, the worked examples' text (minigpt/teaching/examples/) included, shares
    no run of ten words with the course material: the tool's whole report must be empty."""
    if not SEED_OVERLAP.exists():
        pytest.skip(f"{SEED_OVERLAP} not present (course material lives outside the repo)")
    assert (REPO / "minigpt" / "teaching" / "examples").is_dir()
    out = subprocess.run(
        [sys.executable, str(SEED_OVERLAP), str(REPO)], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0 and out.stdout.strip().startswith("0 verbatim runs"), out.stdout[-4000:]
