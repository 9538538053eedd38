"""A full disk: training, the progress database and the exports, each on a small tmpfs.

A write that runs out of room ends in one line that says the disk is full and what stays intact
(``minigpt.guarded.disk_full_guard``): a run keeps its last good checkpoint, loadable; the
progress database rolls back; an export leaves the previous file whole. Mounting a tmpfs needs
root (or a user namespace): where it is not allowed, these tests skip.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from minigpt.errors import DiskFullError, StoreError
from tests.helpers.hostile import REPO, bounded
from tui.cli import main


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MB file system of its own; unmounted afterwards."""
    where = tmp_path / f"disk-{uuid.uuid4().hex[:6]}"
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(where)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or done.returncode})")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(disk: Path, leave: int = 0) -> Path:
    """Fill ``disk`` up to ``leave`` bytes of room (a file that can be deleted to free it)."""
    ballast = disk / "ballast"
    with open(ballast, "wb", buffering=0) as f:  # unbuffered: nothing left to flush at close
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError as e:
            assert e.errno == errno.ENOSPC
    if leave:
        with open(ballast, "r+b") as f:
            f.truncate(max(0, ballast.stat().st_size - leave))
    return ballast


def train(data_dir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "minigpt.cli", "--data-dir", str(data_dir), "train", *args,
                           "--device", "cpu", "-q"], capture_output=True, text=True, timeout=200, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"})


def error_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    lines = [line for line in done.stderr.splitlines() if line.startswith("Error: ")]
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_training_into_a_full_disk_keeps_the_last_good_checkpoint(small_disk):
    """The sweep's case: a model whose first checkpoint fits and whose second does not."""
    done = train(small_disk, "--d-model", "48", "--n-layers", "2", "--steps", "60", "--eval-interval", "20")
    line = error_line(done)
    assert "the disk is full" in line and "the last good checkpoint (step 20) is intact" in line, line
    run = next((small_disk / "runs").iterdir())
    status = json.loads((run / "status.json").read_text())
    assert status["state"] == "failed" and "the disk is full" in status["failure_reason"]
    assert not any(p.name.endswith(".tmp") for p in run.iterdir())  # the half-written copy is gone
    sampled = CliRunner().invoke(main, ["sample", "-n", "2", "--checkpoint", str(run / "checkpoint")])
    assert sampled.exit_code == 0 and len(sampled.output.split()) >= 2, sampled.output


def test_a_disk_full_before_the_first_checkpoint_says_nothing_was_kept(small_disk):
    done = train(small_disk, "--d-model", "128", "--n-layers", "4", "--steps", "30", "--eval-interval", "10")
    line = error_line(done)
    assert "the disk is full" in line and "no earlier checkpoint was there to keep" in line, line


def test_a_disk_already_full_refuses_before_training(small_disk):
    """Not in the sweep: no room even for the run's config.json or its first status."""
    (small_disk / "runs").mkdir()
    fill(small_disk)
    done = train(small_disk, "--steps", "5", "--out", str(small_disk / "runs" / "r"))
    line = error_line(done)
    assert "the disk is full" in line or "No space left" in line, line


def test_the_progress_database_on_a_full_disk_loses_nothing(small_disk):
    from minigpt.store import Store

    store = Store(small_disk / "progress.sqlite3")
    store.set_setting("theme", "dark")
    ballast = fill(small_disk)
    with bounded(30), pytest.raises(StoreError, match="full"):
        for i in range(200):  # enough rows to need a new page
            store.set_setting(f"key-{i}", "x" * 4000)
    ballast.unlink()
    assert store.get_setting("theme") == "dark"
    store.set_setting("after", "ok")  # room again: the store works on
    assert Store(small_disk / "progress.sqlite3").get_setting("after") == "ok"


def test_exports_on_a_full_disk_leave_the_previous_file(small_disk, tmp_path):
    from minigpt.study.anki import export_apkg
    from minigpt.study.decks import load_decks

    deck = load_decks()
    target = small_disk / "cards.apkg"
    target.write_bytes(b"previous export")
    fill(small_disk)
    with bounded(60), pytest.raises(DiskFullError, match="the disk is full: the deck cards.apkg"):
        export_apkg(deck, target)
    assert target.read_bytes() == b"previous export"
    assert [p.name for p in small_disk.iterdir() if p.name.endswith(".tmp")] == []


def test_sweep_export_to_a_full_disk_is_one_line(small_disk, tmp_path, isolated_data_dir):
    """``minigpt sweep --export csv --out FILE`` on a full disk (an experiment made on a roomy one)."""
    from minigpt.experiments import folder
    from minigpt.experiments.presets import custom_spec, parse_axis
    from minigpt.experiments.spec import Budget

    exp = folder.create_experiment(custom_spec("full", [parse_axis("lr=1e-3,2e-3")], Budget("steps", 5), {}))
    out = small_disk / "results.csv"
    out.write_text("previous\n")
    fill(small_disk)
    result = CliRunner().invoke(main, ["sweep", "--export", "csv", "--out", str(out), exp.name])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and "the disk is full" in lines[0], result.output
    assert out.read_text() == "previous\n"
    shutil.rmtree(exp.dir)
