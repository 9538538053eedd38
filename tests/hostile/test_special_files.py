"""Special files where a reader expects a small regular file: a FIFO (opening it for reading waits
for a writer forever), ``/dev/zero`` (reading never ends), a folder, a sparse file of 20 GB.

Every reader of a run folder, a checkpoint, an experiment, a deck, a lesson or a card file goes
through ``minigpt.guarded``: each case here is refused (or, for a listing, shown as broken) at
once, within a few seconds, in the library, the CLI and the app. Peak memory stays a small
multiple of a large run file, measured in a child process.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from minigpt.errors import TutorError, UnsafeFileError
from tests.helpers.hostile import REPO, bounded, one_error_line
from tui.cli import main

RUN = REPO / "tests" / "fixtures" / "round1" / "runs" / "run-gpt"  # a finished run with both checkpoints
SPARSE = 20 << 30  # a file that claims 20 GB (sparse: it takes no room)


def special(path: Path, kind: str) -> Path:
    """Put a FIFO, a link to /dev/zero, a folder or a huge sparse file at ``path``."""
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero":
        path.symlink_to("/dev/zero")
    elif kind == "folder":
        path.mkdir()
    else:
        with open(path, "wb") as f:
            f.truncate(SPARSE)
    return path


KINDS = ["fifo", "zero", "folder", "sparse"]


@pytest.fixture
def run(tmp_path) -> Path:
    target = tmp_path / "runs" / "run"
    shutil.copytree(RUN, target)
    return target


# ---------------------------------------------------------------------------- the library's readers

def _read_run(run):
    from minigpt.runs.listing import read_run

    info = read_run(run)
    assert info.status == "broken", info
    return info.reason


def _run_config(run):
    from minigpt.training.options import load_run_config

    return load_run_config(run)


def _checkpoint(run):
    from minigpt.checkpoint import load_checkpoint

    return load_checkpoint(run / "checkpoint")


def _optimizer(run):
    from minigpt.checkpoint import load_optimizer_state, read_checkpoint_meta
    from minigpt.models.build import build_model
    from minigpt.training.options import load_run_config
    from minigpt.training.schedule import make_optimizer

    meta = read_checkpoint_meta(run / "last")
    model = build_model(meta.kind, meta.model_config)
    import torch

    return load_optimizer_state(run / "last", make_optimizer(model, load_run_config(run), torch.device("cpu")))


# (file in the run folder, the reader, what a refusal says) — each raises a TutorError or reports
# the run as broken; none waits.
READERS = {
    "status.json": ("status.json", _read_run),
    "run config.json": ("config.json", lambda run: _run_config(run)),
    "checkpoint config.json": ("checkpoint/config.json", _checkpoint),
    "model.safetensors": ("checkpoint/model.safetensors", _checkpoint),
    "optimizer.safetensors": ("last/optimizer.safetensors", _optimizer),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", list(READERS))
def test_every_run_folder_reader_refuses_at_once(run, name, kind):
    where, reader = READERS[name]
    special(run / where, kind)
    with bounded(20):
        try:
            said = reader(run)
        except TutorError as e:
            said = str(e)
    assert said and "Traceback" not in said
    if kind in ("fifo", "zero"):
        assert "not a regular file" in said or "a folder" in said, said
    if kind == "sparse" and name != "status.json":
        assert "larger than" in said or "GiB" in said or "damaged" in said or "not" in said, said


@pytest.mark.parametrize("kind", ["fifo", "zero", "sparse"])
def test_metrics_and_lock_files_never_block_a_listing(run, kind):
    """Files the sweep did not try: metrics.jsonl and trainer.lock as special files."""
    from minigpt.runs.listing import read_run
    from minigpt.runs.lock import is_locked, lock_holder
    from minigpt.runs.metrics import read_metrics

    special(run / "metrics.jsonl", kind)
    special(run / "trainer.lock", kind)
    with bounded(10):
        assert read_metrics(run) == ([], 0)
        assert not is_locked(run) and lock_holder(run) is None
        assert read_run(run).status == "finished"


@pytest.mark.parametrize("kind", ["fifo", "zero", "sparse"])
def test_control_files_of_the_app_never_block(run, kind):
    """launch.json, the stop request and the worker's error log (the app polls them)."""
    from minigpt.control import run_processes

    for name in (run_processes.LAUNCH_FILE, run_processes.STOP_FILE, run_processes.STDERR_FILE):
        special(run / name, kind)
    with bounded(10):
        tail = run_processes.stderr_tail(run)  # a 20 GB log: only its last 16 KB are read
        assert tail == [] if kind != "sparse" else sum(map(len, tail)) <= 16384
        view = run_processes.run_state(run)
        assert view.info.status == "finished"


@pytest.mark.parametrize("kind", KINDS)
def test_decks_lessons_card_files_and_experiment_specs(tmp_path, kind):
    from minigpt.errors import CardImportError, ConfigError, DeckError, LessonError
    from minigpt.experiments.spec import load_spec_file
    from minigpt.lessons import load_lessons
    from minigpt.study.anki import read_card_file
    from minigpt.study.decks import load_deck_file

    (tmp_path / "lessons").mkdir()
    cases = [(tmp_path / "deck.toml", load_deck_file, DeckError),
             (tmp_path / "lessons" / "01-x.md", lambda p: load_lessons(p.parent), LessonError),
             (tmp_path / "cards.md", read_card_file, CardImportError),
             (tmp_path / "grid.toml", load_spec_file, ConfigError)]
    with bounded(20):
        for path, reader, error in cases:
            special(path, kind)
            with pytest.raises(error):
                reader(path)


def test_experiment_folder_files_read_as_empty_not_forever(tmp_path):
    from minigpt.experiments import folder
    from minigpt.experiments.run_extras import read_extras

    for name, kind in ((folder.EVENTS_FILE, "fifo"), (folder.LOG_FILE, "zero"), ("extras.json", "fifo")):
        special(tmp_path / name, kind)
    with bounded(10):
        assert folder.read_events(tmp_path) == [] and folder.log_tail(tmp_path) == [] and read_extras(tmp_path) == {}


def test_writers_refuse_a_fifo_instead_of_waiting_for_a_reader(tmp_path):
    """Appending to a FIFO blocks until someone reads it: every log writer opens it without waiting."""
    from minigpt import guarded

    fifo = special(tmp_path / "log", "fifo")
    with bounded(10), pytest.raises(UnsafeFileError, match="pipe"):
        guarded.open_append(fifo)
    with bounded(10), pytest.raises(UnsafeFileError, match="device"):
        guarded.open_append(Path("/dev/null"))


# ---------------------------------------------------------------------------- the commands

@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_runs_lists_a_special_status_as_broken(isolated_data_dir, kind):
    runs = isolated_data_dir / "runs"
    shutil.copytree(RUN, runs / "run")
    special(runs / "run" / "status.json", kind)
    with bounded(30):
        plain = CliRunner().invoke(main, ["runs"])
        listed = json.loads(CliRunner().invoke(main, ["runs", "--json"]).output)
    assert plain.exit_code == 0 and "broken" in plain.output and "not a regular file" in plain.output
    assert listed[0]["status"] == "broken"


@pytest.mark.parametrize("where", ["config.json", "model.safetensors"])
@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_sample_and_eval_refuse_a_special_checkpoint_file(run, where, kind):
    special(run / "checkpoint" / where, kind)
    with bounded(60):
        for command in (["sample", "-n", "1"], ["eval"]):
            line = one_error_line(CliRunner().invoke(main, [*command, "--checkpoint", str(run / "checkpoint")]))
            assert "not a regular file" in line, line


def test_resuming_a_run_whose_metrics_file_is_a_fifo_says_so(run):
    special(run / "metrics.jsonl", "fifo")
    with bounded(120):
        line = one_error_line(CliRunner().invoke(main, ["train", "--resume", str(run), "-q"]))
    assert "metrics.jsonl" in line and ("pipe" in line or "regular" in line), line


# ---------------------------------------------------------------------------- the app

async def test_home_screen_counts_with_a_fifo_in_the_newest_run(isolated_data_dir, make_app):
    """The home screen froze on "counting…" with a FIFO status.json in a run folder."""
    import asyncio

    from tests.helpers.hostile import screen_text

    runs = isolated_data_dir / "runs"
    shutil.copytree(RUN, runs / "run")
    special(runs / "run" / "status.json", "fifo")
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(200):
            await pilot.pause()
            if "counting…" not in screen_text(app):
                break
            await asyncio.sleep(0.05)
        text = screen_text(app)
        assert "counting…" not in text and "Lessons read" in text, text


# ---------------------------------------------------------------------------- memory

def test_a_large_metrics_file_is_read_within_a_small_multiple_of_its_size(tmp_path):
    """Peak memory of reading 60 MB of metrics, in a fresh process (VmHWM, as the dataset test)."""
    line = json.dumps({"step": 1, "train_loss": 2.5, "lr": 0.001, "tokens_per_s": 1000.0, "elapsed_s": 1.0})
    path = tmp_path / "metrics.jsonl"
    with open(path, "w") as f:
        f.write((line + "\n") * (60_000_000 // (len(line) + 1)))
    probe = textwrap.dedent(f"""
        def status(key):
            with open("/proc/self/status") as f:
                return next(int(l.split()[1]) * 1024 for l in f if l.startswith(key))
        from minigpt.runs.metrics import read_metrics
        before = status("VmRSS:")
        records, end = read_metrics({str(tmp_path)!r})
        n = len(records)
        del records
        print(n, status("VmHWM:") - before)
    """)
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=200,
                       cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode == 0, r.stderr
    n, grown = map(int, r.stdout.split())
    size = path.stat().st_size
    assert n > 500_000
    # Parsed records are Python dicts (~10× the line); the bytes themselves are read once.
    assert grown < 16 * size, f"peak grew by {grown / size:.1f}× the file"


def test_a_progress_database_that_is_a_fifo_is_refused_not_waited_on(tmp_path):
    """Not in the sweep: the settings and progress database itself as a FIFO."""
    from minigpt.errors import StoreError
    from minigpt.store import Store

    fifo = special(tmp_path / "progress.sqlite3", "fifo")
    with bounded(10), pytest.raises(StoreError):
        Store(fifo)
