"""Worked examples kept on disk (minigpt.teaching.examples.cache): what the library rendered, under
a key of the code; a stale, damaged or hostile entry is recomputed, never trusted; lab-job examples
are never kept; misses come from a child process, one answer at a time."""

from __future__ import annotations

import os

import pytest

from minigpt.teaching.examples import cache
from minigpt.teaching.examples.catalog import render_example

CHEAP = "attention.course.scores"  # a 4×4 matrix product: quick to render


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIGPT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_an_example_computed_once_is_read_back_as_the_library_rendered_it():
    assert cache.cached(CHEAP) is None
    text = cache.compute(CHEAP)
    assert text == render_example(CHEAP)
    assert cache.cached(CHEAP) == text
    assert [p.name for p in cache.entry_path(CHEAP).parent.iterdir()] == [cache.entry_path(CHEAP).name]  # no temp left


def test_a_lab_jobs_example_is_never_kept():
    from minigpt.runs.lab import JOBS

    for job in JOBS.values():
        cache.store(job.example, "stale result")
        assert not cache.entry_path(job.example).exists() and cache.cached(job.example) is None


def _rewrite(path, transform):
    path.write_bytes(transform(path.read_bytes()))


@pytest.mark.parametrize("damage", [
    pytest.param(lambda b: b.replace(b"|", b"!", 1), id="text-edited-digest-kept"),
    pytest.param(lambda b: b[: len(b) // 2], id="cut-short"),
    pytest.param(lambda b: b"", id="empty"),
    pytest.param(lambda b: b"\xff\xfe" + b, id="not-ascii-header"),
    pytest.param(lambda b: b.split(b"\n", 1)[0] + b"\n\xff\xfe\xfd", id="body-not-utf8"),
    pytest.param(lambda b: b.replace(b"minigpt-example 1", b"minigpt-example 9", 1), id="other-format"),
    pytest.param(lambda b: b.replace(cache.cache_key(CHEAP).encode(), b"0" * 64, 1), id="other-key"),
    pytest.param(lambda b: b"x" * (cache.ENTRY_LIMIT + 1), id="too-large"),
])
def test_a_damaged_entry_is_recomputed(damage):
    good = cache.compute(CHEAP)
    _rewrite(cache.entry_path(CHEAP), damage)
    assert cache.cached(CHEAP) is None
    assert cache.compute(CHEAP) == good and cache.cached(CHEAP) == good


def test_an_entry_that_is_a_pipe_or_a_folder_is_not_read(own_cache):
    path = cache.entry_path(CHEAP)
    path.parent.mkdir(parents=True)
    os.mkfifo(path)  # opening a FIFO with no writer would block the app for ever
    assert cache.cached(CHEAP) is None
    path.unlink()
    path.mkdir()
    assert cache.cached(CHEAP) is None
    cache.store(CHEAP, "text")  # cannot replace a folder: only slower, never an error
    assert cache.cached(CHEAP) is None


def test_a_change_to_the_code_changes_the_key(monkeypatch):
    cache.compute(CHEAP)
    module = cache.EXAMPLES[CHEAP].build.__module__
    monkeypatch.setattr(cache, "_module_digest", lambda name: "edited" if name == module else "same")
    assert cache.cached(CHEAP) is None


def test_an_unwritable_cache_only_costs_time(own_cache):
    own_cache.parent.mkdir(parents=True, exist_ok=True)
    own_cache.write_text("a file where the folder should be")
    assert cache.compute(CHEAP) == render_example(CHEAP) and cache.cached(CHEAP) is None


@pytest.mark.soak
def test_the_child_answers_each_example_and_says_why_one_failed():
    child = cache.ChildComputation([CHEAP, "no.such.example"])
    answers = {example_id: (text, error) for example_id, text, error in child.answers()}
    assert answers[CHEAP] == (render_example(CHEAP), None)
    assert answers["no.such.example"][0] is None and "unknown example id" in answers["no.such.example"][1]
    assert cache.cached(CHEAP) == render_example(CHEAP)  # stored by the child


@pytest.mark.soak
def test_a_stopped_child_ends_its_answers():
    child = cache.ChildComputation(["tokens.names_merges"])
    child.stop()
    answers = list(child.answers())
    assert answers == [("tokens.names_merges", None, answers[0][2])] and "ended early" in answers[0][2]
    assert child.proc.returncode is not None
