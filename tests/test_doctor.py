"""minigpt doctor: each check's verdict from facts made up by hand, the JSON's shape, one real run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from minigpt import doctor
from minigpt.cli.main import main
from minigpt.doctor import Facts

GOOD = dict(torch_version="2.13.0+cpu", threads=2, cores=2, memory_available=8 << 30, data_dir=Path("/data"),
            data_size=1 << 20, disk_free=50 << 30, terminal=(120, 40), term="xterm-256color",
            extras={"serve": True, "anki": True, "optimizer": True}, checkpoints={"default": None, "mlp": None})


def _check(check, **changes):
    return check(Facts(**{**GOOD, **changes}))


def test_a_good_setup_passes_every_check_with_nothing_to_fix():
    checks = doctor.run_checks(Facts(**GOOD))
    assert [c.status for c in checks] == ["ok"] * len(doctor.CHECKS)
    assert all(c.line().startswith("OK    ") and "Fix:" not in c.line() for c in checks)


@pytest.mark.parametrize("facts, status, words", [
    (dict(torch_version=None), "fail", "pip install 'torch"),
    (dict(cuda_build="12.8"), "warn", "download.pytorch.org/whl/cpu"),  # a CUDA build on a box without a GPU
    (dict(cuda_build="12.8", gpu="NVIDIA H200"), "ok", "NVIDIA H200"),
    (dict(mps=True), "ok", "--device mps"),
])
def test_the_torch_build_and_its_device(facts, status, words):
    check = _check(doctor.check_torch, **facts)
    assert check.status == status and words in check.line()


def test_more_threads_than_cores_is_a_warning_with_the_variable_to_set():
    check = _check(doctor.check_threads, threads=8, cores=2)
    assert check.status == "warn" and "OMP_NUM_THREADS=2" in check.fix


@pytest.mark.parametrize("free, status", [(None, "warn"), (200 << 20, "warn"), (4 << 30, "ok")])
def test_free_memory(free, status):
    assert _check(doctor.check_memory, memory_available=free).status == status


@pytest.mark.parametrize("free, status", [(None, "warn"), (100 << 20, "fail"), (5 << 30, "ok")])
def test_free_disk_where_the_data_folder_is(free, status):
    check = _check(doctor.check_disk, disk_free=free)
    assert check.status == status and (status != "fail" or "--data-dir" in check.fix)


def test_a_data_folder_that_cannot_be_written_fails_and_names_the_option():
    check = _check(doctor.check_data, data_writable=False)
    assert check.status == "fail" and "--data-dir" in check.fix
    assert "1.0 MB" in _check(doctor.check_data).detail


@pytest.mark.parametrize("size, status", [(None, "ok"), ((79, 24), "warn"), ((80, 23), "warn"), ((80, 24), "ok")])
def test_the_terminal_size(size, status):
    assert _check(doctor.check_terminal, terminal=size).status == status


@pytest.mark.parametrize("term, colorterm, tmux, status, fix", [
    ("xterm-256color", "", False, "ok", ""),
    ("xterm", "truecolor", False, "ok", ""),
    ("xterm", "", False, "warn", "TERM=xterm-256color"),
    ("screen", "", True, "warn", "tmux-256color"),
    ("dumb", "", False, "warn", "TERM=xterm-256color"),
])
def test_the_colours(term, colorterm, tmux, status, fix):
    check = _check(doctor.check_colours, term=term, colorterm=colorterm, in_tmux=tmux)
    assert check.status == status and fix in check.fix


@pytest.mark.parametrize("passthrough, clipboard, status, fixes", [
    ("on", "on", "ok", []),
    ("all", "external", "ok", []),
    ("off", "on", "warn", ["allow-passthrough on"]),
    ("on", "off", "warn", ["set-clipboard on"]),
    (None, None, "warn", ["allow-passthrough on", "set-clipboard on"]),
])
def test_tmux_passes_notifications_and_copies_through(passthrough, clipboard, status, fixes):
    check = _check(doctor.check_tmux, in_tmux=True, tmux_passthrough=passthrough, tmux_clipboard=clipboard)
    assert check.status == status and all(f in check.fix for f in fixes)
    assert _check(doctor.check_tmux, in_tmux=False).status == "ok"


def test_a_missing_extra_is_named_with_its_install_command_but_fails_nothing():
    check = _check(doctor.check_extras, extras={"serve": False, "anki": True, "optimizer": False})
    assert check.status == "ok" and "not installed: serve" in check.detail
    assert check.fix == "pip install 'minigpt-tutor[serve]'; pip install 'minigpt-tutor[optimizer]'"


def test_a_damaged_or_missing_checkpoint_fails_with_the_reinstall():
    check = _check(doctor.check_checkpoints, checkpoints={"default": None, "mlp": "model.safetensors: truncated"})
    assert check.status == "fail" and "mlp: model.safetensors: truncated" in check.detail and "reinstall" in check.fix
    assert _check(doctor.check_checkpoints, checkpoints={}).status == "fail"


def test_the_json_has_every_check_and_says_whether_any_failed():
    report = doctor.report(doctor.run_checks(Facts(**{**GOOD, "disk_free": 1})))
    assert report["ok"] is False
    assert [c["name"] for c in report["checks"]] == ["torch", "threads", "memory", "data folder", "disk", "terminal",
                                                     "colours", "tmux", "extras", "checkpoints"]
    assert all(set(c) == {"name", "status", "detail", "fix"} for c in report["checks"])


def test_a_real_run_in_process_finds_the_shipped_checkpoints_intact(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIGPT_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("TMUX", raising=False)  # no tmux server asked, wherever the suite runs
    result = CliRunner().invoke(main, ["doctor", "--json"])
    report = json.loads(result.output)
    by_name = {c["name"]: c for c in report["checks"]}
    assert by_name["checkpoints"]["status"] == "ok" and "default" in by_name["checkpoints"]["detail"]
    assert by_name["extras"]["detail"].startswith("installed: serve, anki, optimizer")
    assert str(tmp_path) in by_name["data folder"]["detail"]
    assert result.exit_code == (0 if report["ok"] else 1)
