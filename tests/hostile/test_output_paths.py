"""Outputs that would land on the tutor's own files (issue 44 item 1): `cards --flagged --export
D/progress.sqlite3` used to write the Markdown report over the live database, and an export onto a
FIFO blocked forever. Every export goes through minigpt.outputs: refused when it is the database,
its companions, a file of the data folder or a run (by place, by link, by inode), or not a regular
file; written to a temporary file and renamed, never through a link."""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner

from minigpt.cli import main
from minigpt.errors import UnsafeFileError
from minigpt.outputs import check_output, write_output, write_output_with
from tests.helpers.hostile import one_error_line


@pytest.fixture
def data(isolated_data_dir) -> Path:
    """A data folder whose progress database holds one review, and one run folder."""
    from minigpt.store import Store

    store = Store(isolated_data_dir / "progress.sqlite3")
    store.close()
    with closing(sqlite3.connect(isolated_data_dir / "progress.sqlite3")) as conn, conn:
        conn.execute("CREATE TABLE keepsake (x)")
        conn.execute("INSERT INTO keepsake VALUES ('200,000 reviews')")
    run = isolated_data_dir / "runs" / "r1"
    run.mkdir(parents=True)
    (run / "config.json").write_text("{}", encoding="utf-8")
    (run / "metrics.jsonl").write_text('{"step": 1}\n', encoding="utf-8")
    return isolated_data_dir


def _database_intact(data: Path) -> None:
    with closing(sqlite3.connect(data / "progress.sqlite3")) as conn:
        assert conn.execute("SELECT x FROM keepsake").fetchall() == [("200,000 reviews",)]


def _export(target: Path | str) -> str:
    return one_error_line(CliRunner().invoke(main, ["cards", "--flagged", "--export", str(target)]))


def test_the_report_is_never_written_over_the_progress_database(data):
    line = _export(data / "progress.sqlite3")
    assert "progress database" in line
    _database_intact(data)


@pytest.mark.parametrize("suffix", ["-wal", "-shm", "-journal"])
def test_nor_over_its_companions(data, suffix):
    companion = data / f"progress.sqlite3{suffix}"
    companion.write_bytes(b"sqlite's own")
    assert "progress database" in _export(companion)
    assert companion.read_bytes() == b"sqlite's own"


def test_nor_through_a_symlink_to_it(data, tmp_path):
    link = tmp_path / "report.md"
    link.symlink_to(data / "progress.sqlite3")
    assert "progress database" in _export(link)
    _database_intact(data)


def test_nor_through_a_hard_link_to_it(data, tmp_path):
    link = tmp_path / "report.md"
    os.link(data / "progress.sqlite3", link)
    assert "progress database" in _export(link)
    _database_intact(data)


def test_nor_through_a_linked_folder(data, tmp_path):
    (tmp_path / "elsewhere").symlink_to(data)
    assert "progress database" in _export(tmp_path / "elsewhere" / "progress.sqlite3")
    _database_intact(data)


def test_nor_onto_a_run_file_or_anything_else_in_the_data_folder(data):
    metrics = data / "runs" / "r1" / "metrics.jsonl"
    assert "data folder" in _export(metrics)
    assert "data folder" in _export(data / "app.log")
    assert metrics.read_text(encoding="utf-8") == '{"step": 1}\n'


def test_nor_through_a_hard_link_to_a_run_file(data, tmp_path):
    link = tmp_path / "report.md"
    os.link(data / "runs" / "r1" / "metrics.jsonl", link)
    assert "hard link" in _export(link)


def test_nor_into_a_run_folder_outside_the_data_folder(data, tmp_path):
    run = tmp_path / "my-run"
    run.mkdir()
    (run / "config.json").write_text("{}", encoding="utf-8")
    (run / "status.json").write_text("{}", encoding="utf-8")
    assert "run" in _export(run / "status.json")
    assert (run / "status.json").read_text(encoding="utf-8") == "{}"


def test_a_fifo_is_refused_at_once(data, tmp_path):
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    assert "a pipe (FIFO), not a regular file" in _export(fifo)


def test_a_device_is_refused(data):
    assert "a device, not a regular file" in _export("/dev/null")


def test_a_folder_is_refused_by_the_writer(data, tmp_path):
    with pytest.raises(UnsafeFileError, match="a folder, not a file"):
        write_output(tmp_path, "x")


def test_the_sweep_export_is_refused_too(data):
    line = one_error_line(CliRunner().invoke(main, ["sweep", "--export", "csv", "--out",
                                                    str(data / "progress.sqlite3")]))
    assert "progress database" in line
    _database_intact(data)


def test_the_anki_export_is_refused_too(data):
    from minigpt.study.anki import export_apkg
    from minigpt.study.cards import Deck

    with pytest.raises(UnsafeFileError, match="progress database"):
        export_apkg(Deck(), data / "progress.sqlite3")
    _database_intact(data)


def test_an_export_replaces_a_link_at_its_name_and_never_writes_through_it(data, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("mine", encoding="utf-8")
    link = tmp_path / "report.md"
    link.symlink_to(victim)
    write_output(link, "report")
    assert victim.read_text(encoding="utf-8") == "mine"
    assert not link.is_symlink() and link.read_text(encoding="utf-8") == "report"


def test_a_failed_write_keeps_the_previous_file_and_leaves_no_temporary(data, tmp_path):
    out = tmp_path / "report.md"
    out.write_text("before", encoding="utf-8")

    def half_then_fail(tmp: Path) -> None:
        tmp.write_text("half", encoding="utf-8")
        raise RuntimeError("stopped midway")

    with pytest.raises(RuntimeError):
        write_output_with(out, half_then_fail)
    assert out.read_text(encoding="utf-8") == "before"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md", "user-data"]


def test_the_data_folders_exports_folder_is_an_output(data):
    (data / "exports").mkdir()
    assert check_output(data / "exports" / "deck.apkg") == data / "exports" / "deck.apkg"


def test_the_exported_name_is_echoed_printable(data, tmp_path):
    out = tmp_path / "x\x1b]0;T\x07.md"
    result = CliRunner().invoke(main, ["cards", "--flagged", "--export", str(out)])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "x␛]0;T␇.md" in result.output
    assert out.read_text(encoding="utf-8").startswith("#")
