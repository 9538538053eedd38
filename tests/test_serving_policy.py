"""What a session served to a browser may do: code, files, training runs, and a guest's cleanup."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from minigpt import paths, serving_policy
from minigpt.lessons import load_lessons
from minigpt.runs.files import process_start_time
from tests.helpers.waiting import wait_until


@pytest.fixture
def served(monkeypatch, tmp_path):
    monkeypatch.setenv(serving_policy.ENV_SERVED, "1")
    monkeypatch.setenv(serving_policy.ENV_STATE_DIR, str(tmp_path / "serve-state"))
    for name in (serving_policy.ENV_ALLOW_CODE, serving_policy.ENV_ALLOW_FILES, serving_policy.ENV_MAX_RUNS, serving_policy.ENV_GUEST):
        monkeypatch.delenv(name, raising=False)


def _a_snippet() -> str:
    return next(s for lesson in load_lessons() for s in lesson.snippets())


# ---------------------------------------------------------------------------- code


def test_a_terminal_session_runs_any_code():
    assert not serving_policy.is_served() and serving_policy.code_editing_allowed()
    serving_policy.check_code("print('anything')")


def test_served_sessions_run_lesson_snippets_as_written_but_not_edited(served):
    snippet = _a_snippet()
    serving_policy.check_code(snippet)
    serving_policy.check_code(snippet.replace("\n", "   \n") + "\n\n")  # trailing blanks are not an edit
    with pytest.raises(serving_policy.PolicyRefusal, match="--allow-code"):
        serving_policy.check_code(snippet + "\nimport os; os.system('id')")
    with pytest.raises(serving_policy.PolicyRefusal):
        serving_policy.check_code("print(open('/etc/passwd').read())")


def test_allow_code_lets_edited_code_run(served, monkeypatch):
    monkeypatch.setenv(serving_policy.ENV_ALLOW_CODE, "1")
    serving_policy.check_code("print(1 + 1)")


def test_the_caller_can_name_the_one_snippet_an_edit_is_judged_against(served):
    serving_policy.check_code("print(2)", originals=["print(2)"])
    with pytest.raises(serving_policy.PolicyRefusal):
        serving_policy.check_code(_a_snippet(), originals=["print(2)"])


# ---------------------------------------------------------------------------- files


def test_served_paths_inside_the_data_folder_and_bundled_content_are_allowed(served, isolated_data_dir):
    inside = isolated_data_dir / "imports" / "cards.md"
    assert serving_policy.check_path(inside) == inside
    assert serving_policy.check_path(paths.default_dataset()) == paths.default_dataset()
    assert serving_policy.check_path(paths.default_checkpoint() / "config.json")


@pytest.mark.parametrize("outside", ["/etc/passwd", "~/.ssh/id_rsa", "/tmp"])
def test_served_paths_outside_are_refused_with_the_way_out(served, outside):
    with pytest.raises(serving_policy.PolicyRefusal, match="outside this server's folders.*--allow-files"):
        serving_policy.check_path(outside)


def test_dot_dot_and_symlinks_do_not_walk_out_of_the_fence(served, isolated_data_dir, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("not for browsers", encoding="utf-8")
    with pytest.raises(serving_policy.PolicyRefusal):
        serving_policy.check_path(isolated_data_dir / ".." / "secret.txt")
    link = isolated_data_dir / "looks-inside.txt"
    link.symlink_to(secret)
    with pytest.raises(serving_policy.PolicyRefusal):
        serving_policy.check_path(link)


def test_relative_paths_are_judged_from_the_working_folder(served, isolated_data_dir, monkeypatch):
    isolated_data_dir.mkdir(parents=True, exist_ok=True)
    monkeypatch.chdir(isolated_data_dir)  # the served app's working folder is its data folder
    assert serving_policy.check_path("cards.md") == Path("cards.md")
    with pytest.raises(serving_policy.PolicyRefusal):
        serving_policy.check_path("../../cards.md")


def test_allow_files_and_terminal_sessions_open_any_path(served, monkeypatch):
    monkeypatch.setenv(serving_policy.ENV_ALLOW_FILES, "1")
    assert serving_policy.check_path("/etc/hostname") == Path("/etc/hostname")
    monkeypatch.delenv(serving_policy.ENV_SERVED)
    monkeypatch.delenv(serving_policy.ENV_ALLOW_FILES)
    assert serving_policy.check_path("/etc/hostname") == Path("/etc/hostname")


# ---------------------------------------------------------------------------- training runs


def _run_launched_by(run_dir: Path, proc: subprocess.Popen) -> Path:
    """A run folder whose launch record names ``proc``: the panel sees it as starting while it lives."""
    run_dir.mkdir(parents=True)
    (run_dir / "config.json").write_text("{}", encoding="utf-8")
    (run_dir / "launch.json").write_text(json.dumps({
        "pid": proc.pid, "pid_start": process_start_time(proc.pid), "launched_ts": time.time()}), encoding="utf-8")
    return run_dir


def _sleeper(ignore_term: bool = False, run_dir: Path | None = None) -> subprocess.Popen:
    """A stand-in worker; given ``run_dir``, its command line is a trainer's for that folder (what
    the stop's proof reads: it never signals a process the folder merely names)."""
    code = "import signal, time\n"
    if ignore_term:
        code += "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    code += "print('ready', flush=True)\ntime.sleep(120)\n"
    as_trainer = ["minigpt.cli", "train", "--out", str(run_dir)] if run_dir is not None else []
    proc = subprocess.Popen([sys.executable, "-c", code, *as_trainer], stdout=subprocess.PIPE, start_new_session=True)
    assert proc.stdout.readline().strip() == b"ready"  # its handlers are in place
    return proc


def test_the_served_run_limit_counts_live_runs_of_every_session(served, tmp_path):
    worker = _sleeper()
    try:
        with serving_policy.training_slot() as register:
            register(_run_launched_by(tmp_path / "runs" / "a", worker))
        assert serving_policy.live_served_runs() == [(tmp_path / "runs" / "a").resolve()]
        with pytest.raises(serving_policy.TrainingLimitReached, match="1 training run .* already training.*allows 1"):
            with serving_policy.training_slot():
                pass
    finally:
        worker.kill()
        worker.wait()
    assert serving_policy.live_served_runs() == []  # a dead worker frees its slot
    with serving_policy.training_slot() as register:
        register(tmp_path / "runs" / "b")


def test_max_runs_zero_refuses_every_start_and_terminals_have_no_limit(served, monkeypatch):
    monkeypatch.setenv(serving_policy.ENV_MAX_RUNS, "0")
    with pytest.raises(serving_policy.TrainingLimitReached, match="does not let browser sessions start"):
        with serving_policy.training_slot():
            pass
    monkeypatch.delenv(serving_policy.ENV_SERVED)
    with serving_policy.training_slot() as register:
        register(Path("anything"))


# ---------------------------------------------------------------------------- guest sessions


def test_stop_runs_in_escalates_to_sigkill_for_a_worker_that_ignores_sigterm(tmp_path):
    stubborn = _sleeper(ignore_term=True, run_dir=tmp_path / "guest" / "runs" / "r1")
    run_dir = _run_launched_by(tmp_path / "guest" / "runs" / "r1", stubborn)
    try:
        assert serving_policy.stop_runs_in(tmp_path / "guest", grace_s=0.5) == [run_dir]
        assert stubborn.wait(10) == -signal.SIGKILL
    finally:
        if stubborn.poll() is None:
            stubborn.kill()


def test_stop_runs_in_stops_a_training_worker_cleanly(tmp_path, fake_trainer):
    """A worker the app launched (the fake trainer: what is checked is the clean-up's proof and
    signal, and the worker's clean stop, not its training)."""
    from minigpt.control import run_processes
    from minigpt.runs.listing import pid_alive
    from minigpt.training.options import TrainConfig

    guest = tmp_path / "guest"
    cfg = TrainConfig(model="gpt", d_model=16, n_heads=2, n_layers=1, steps=100_000, eval_interval=50)
    run_dir = asyncio.run(run_processes.start_run(cfg, root=guest / "runs"))
    wait_until(lambda: run_processes.run_state(run_dir).status == "running", 90, "the worker to train", step=0.2,
               describe=lambda: str(run_processes.stderr_tail(run_dir)))
    state = run_processes.run_state(run_dir)
    assert state.status == "running", run_processes.stderr_tail(run_dir)
    assert serving_policy.stop_runs_in(guest) == [run_dir]
    assert not pid_alive(state.alive_pid)
    assert run_processes.run_state(run_dir).status == "stopped"  # SIGTERM: it saved and said so
