"""Answers that were silently wrong: a `train --note` dropped, a resume on a changed data file, a
run folder whose path cannot be saved found only after training."""

from __future__ import annotations

import json
import os
from pathlib import Path

from click.testing import CliRunner

from minigpt import paths
from minigpt.cli import main
from minigpt.runs import listing
from tests.helpers.hostile import one_error_line

TINY = ["--d-model", "16", "--n-heads", "2", "--n-layers", "1", "--batch-size", "16", "--steps", "3",
        "--eval-interval", "2", "--device", "cpu", "--quiet"]


def _names(path: Path, n: int = 300, salt: str = "") -> Path:
    path.write_text("\n".join(f"{salt}name{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}" for i in range(n)) + "\n",
                    encoding="utf-8")
    return path


def _status(run: Path) -> dict:
    return json.loads((run / "status.json").read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------- --note


def test_train_keeps_its_note(tmp_path):
    run = tmp_path / "run"
    result = CliRunner().invoke(main, ["train", *TINY, "--out", str(run), "--note", "first try"])
    assert result.exit_code == 0, result.output
    assert _status(run)["note"] == "first try"
    assert listing.read_run(run).note == "first try"


def test_a_long_note_is_refused_by_train_as_by_rename(tmp_path):
    run = tmp_path / "run"
    long_note = "x" * 100_000
    refused = one_error_line(CliRunner().invoke(main, ["train", *TINY, "--out", str(run), "--note", long_note]))
    assert "one line of at most 200 characters" in refused and not run.exists()
    ok = CliRunner().invoke(main, ["train", *TINY, "--out", str(run), "--note", "n"])
    assert ok.exit_code == 0, ok.output
    renamed = one_error_line(CliRunner().invoke(main, ["rename", str(run), "--note", long_note]))
    assert renamed == refused  # one rule, one message


def test_a_note_with_a_line_break_is_refused_before_training(tmp_path):
    """Not tried by the sweep: a note of two lines (lists show one line per run)."""
    run = tmp_path / "run"
    assert "one line" in one_error_line(CliRunner().invoke(main, ["train", *TINY, "--out", str(run),
                                                                  "--note", "a\nb"]))
    assert not run.exists()


# ---------------------------------------------------------------------------- changed data


def test_resuming_on_a_changed_data_file_is_refused_unless_asked(tmp_path):
    data, run = _names(tmp_path / "names.txt"), tmp_path / "run"
    result = CliRunner().invoke(main, ["train", *TINY, "--data", str(data), "--out", str(run)])
    assert result.exit_code == 0, result.output
    first = _status(run)["data_fingerprint"]
    assert first.startswith(f"{data.stat().st_size}:")
    _names(data, n=600, salt="new")
    refused = one_error_line(CliRunner().invoke(main, ["train", "--resume", str(run), "--quiet"]))
    assert "the data file changed since this run started" in refused and "--data-changed-ok" in refused
    assert _status(run)["data_fingerprint"] == first  # nothing written
    accepted = CliRunner().invoke(main, ["train", "--resume", str(run), "--quiet", "--data-changed-ok"])
    assert accepted.exit_code == 0, accepted.output
    assert _status(run)["data_fingerprint"] not in (None, first)


def test_the_same_size_with_other_contents_is_a_change_too(tmp_path):
    """Not tried by the sweep: a file edited in place, its size unchanged."""
    data, run = _names(tmp_path / "names.txt"), tmp_path / "run"
    assert CliRunner().invoke(main, ["train", *TINY, "--data", str(data), "--out", str(run)]).exit_code == 0
    text = data.read_text(encoding="utf-8")
    data.write_text(text.replace("namea", "nameb", 5), encoding="utf-8")
    assert "changed since this run started" in one_error_line(
        CliRunner().invoke(main, ["train", "--resume", str(run), "--quiet"]))


def test_a_run_saved_before_fingerprints_resumes_as_before(tmp_path):
    data, run = _names(tmp_path / "names.txt"), tmp_path / "run"
    assert CliRunner().invoke(main, ["train", *TINY, "--data", str(data), "--out", str(run)]).exit_code == 0
    status = _status(run)
    del status["data_fingerprint"]
    (run / "status.json").write_text(json.dumps(status), encoding="utf-8")
    result = CliRunner().invoke(main, ["train", "--resume", str(run), "--quiet"])
    assert result.exit_code == 0, result.output
    assert _status(run)["data_fingerprint"].startswith(f"{data.stat().st_size}:")


# ---------------------------------------------------------------------------- paths that are not UTF-8


def test_a_run_folder_whose_path_is_not_utf8_is_refused_before_training(tmp_path):
    folder = Path(os.fsdecode(bytes(tmp_path) + b"/caf\xe9"))
    line = one_error_line(CliRunner().invoke(main, ["train", *TINY, "--out", str(folder / "run")]))
    assert "path is not UTF-8" in line and "caf\\xe9" in line
    assert not (folder / "run" / "metrics.jsonl").exists()


def test_a_data_folder_whose_path_is_not_utf8_is_refused_before_training(tmp_path, monkeypatch):
    """Not tried by the sweep: the whole data folder (--data-dir), no --out."""
    folder = os.fsdecode(bytes(tmp_path) + b"/d\xe9")
    monkeypatch.setenv("MINIGPT_DATA_DIR", folder)
    line = one_error_line(CliRunner().invoke(main, ["train", *TINY]))
    assert "path is not UTF-8" in line
    assert not any(paths.runs_dir().glob("*/metrics.jsonl"))
