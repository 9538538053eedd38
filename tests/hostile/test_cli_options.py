"""CLI options with absurd values, odd paths and unicode: one ``Error:`` line and exit 2, never a
traceback, and never a run that starts on a value that cannot work."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from tests.helpers.hostile import assert_no_control
from tui.cli import main


def run(*args: str):
    r = CliRunner().invoke(main, list(args))
    crashed = r.exception is not None and not isinstance(r.exception, SystemExit)
    assert not crashed, f"{args}: {r.exception!r}"
    return r.exit_code, r.output


@pytest.mark.parametrize("args, pattern", [
    (("-n", "0"), "at least 1 and at most 10,000"),
    (("-n", "100000000"), "at least 1 and at most 10,000"),  # was: a memory error from torch
    (("-n", "99999999999999999999"), "at least 1 and at most 10,000"),
    (("--temperature", "nan"), "temperature must be > 0"),
    (("--temperature", "-inf"), "temperature must be > 0"),
    (("--temperature", "1e-320"), "temperature must be at least 0.001"),  # was: NaN probabilities
    (("--top-k", "-3"), "top-k must be at least 1"),
    (("--top-p", "nan"), r"top-p must be in \(0, 1\]"),
    (("--seed", "99999999999999999999999"), "seed must fit in 64 bits"),  # was: OverflowError
    (("--prefix", "."), "'.' is the start/end token"),  # was: an empty name
    (("--prefix", "\x1b]0;x\x07"), "not in the model's vocabulary"),
    (("--prefix", "z" * 100), "longer than the limit"),
    (("--max-len", "0"), "--max-len must be at least 1"),
    (("--checkpoint", "/dev/null"), "not a checkpoint"),
])
def test_sample_refuses_absurd_values(args, pattern):
    code, out = run("sample", *args)
    assert code == 2, out
    assert out.startswith("Error: ") and out.count("\n") == 1, out
    assert re.search(pattern, out), out
    assert_no_control(out)


@pytest.mark.parametrize("args", [("--temperature", "1e308"), ("--top-k", "10000000000"),
                                  ("--max-len", "100000000"), ("--seed", "-1"), ("-n", "1")])
def test_sample_accepts_extreme_but_meaningful_values(args):
    code, out = run("sample", *args)
    assert code == 0 and out.strip(), out


def test_odd_paths(tmp_path):
    loop = tmp_path / "loop.txt"
    loop.symlink_to(loop)
    unicode_dir = tmp_path / "данные 名前"
    unicode_dir.mkdir()
    good = unicode_dir / "naïve.txt"
    good.write_text("anna\nbob\ncarl\n", encoding="utf-8")
    cases = [
        (loop, "cannot read"),
        (tmp_path / "bad\udcff.txt", r"bad\\xff\.txt: no such file"),  # a name that is not UTF-8
        (unicode_dir / "missing.txt", "данные 名前/missing.txt: no such file"),
    ]
    for path, pattern in cases:
        code, out = run("eval", "--data", str(path))
        assert code == 2 and out.startswith("Error: ") and out.count("\n") == 1, out
        assert re.search(pattern, out), out
    code, out = run("eval", "--data", str(good), "--json")
    assert code == 0 and json.loads(out)["data"] == str(good)


def test_train_output_folder_that_cannot_be(tmp_path):
    data = tmp_path / "d.txt"
    data.write_text("anna\nbob\ncarl\n")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for out_dir in (blocker / "run", "/dev/null"):
        code, out = run("train", "--data", str(data), "--model", "bigram", "-q", "--out", str(out_dir))
        assert code == 2 and out.startswith("Error: ") and out.count("\n") == 1, out


def test_a_data_folder_that_cannot_exist(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for args in (["--data-dir", str(blocker / "sub"), "runs"], ["--data-dir", str(blocker / "sub"), "sample"]):
        code, out = run(*args)
        assert code == 2 and out.startswith("Error: cannot use ") and out.count("\n") == 1, out
