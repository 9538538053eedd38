"""The trainer seam (``workers.trainer_argv``) and the torch-free fake trainer the tests launch
through it: it must speak the run-folder protocol as the real one does, without torch, and pass
the unchanged stop proof (``minigpt.runs.lock.proven_trainer``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from minigpt import paths
from minigpt.checkpoint import load_checkpoint
from minigpt.control import run_processes
from minigpt.runs import listing
from minigpt.runs.metrics import read_metrics
from minigpt.training.options import TrainConfig
from tests.helpers import REPO
from tests.helpers.waiting import wait_until


def test_the_trainer_command_is_minigpt_unless_a_test_names_another(monkeypatch):
    monkeypatch.delenv(run_processes.TRAINER_MODULE_VARIABLE, raising=False)
    assert run_processes.trainer_argv(["train", "--resume", "r"]) == [sys.executable, "-m", "minigpt.cli", "train", "--resume", "r"]
    monkeypatch.setenv(run_processes.TRAINER_MODULE_VARIABLE, "tests.helpers.minigpt_fake_trainer")
    assert run_processes.trainer_argv(["train"])[1:] == ["-m", "tests.helpers.minigpt_fake_trainer", "train"]


def test_the_fake_imports_no_torch_and_leaves_a_finished_run_with_a_loadable_checkpoint(tmp_path, names, fake_trainer):
    run = tmp_path / "run"
    done = subprocess.run([*fake_trainer.argv, "train", "--data", str(names), "--steps", "30", "--eval-interval",
                           "10", "--out", str(run), "--quiet"], env={**os.environ, "PYTHONPATH": str(REPO),
                                                                     "PYTHONPROFILEIMPORTTIME": "1"},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    imported = [line.split("|")[-1].strip() for line in done.stderr.splitlines() if "import time:" in line]
    assert "minigpt.runs.files" in imported and not any(m.split(".")[0] == "torch" for m in imported)
    info = listing.read_run(run)
    assert info.status == "finished" and info.step == 30 and info.best_val is not None
    records = read_metrics(run)[0]
    assert [r["step"] for r in records] == [1, 10, 20, 30]
    assert [r["step"] for r in records if "val_loss" in r] == [10, 20, 30]
    ckpt = load_checkpoint(run / "checkpoint")
    assert ckpt.state["step"] == 30 and ckpt.vocab.chars[0] == "." and set("abc") <= set(ckpt.vocab.chars)


async def test_the_app_stops_a_fake_run_through_the_unchanged_proof_and_resumes_it(fake_trainer):
    fake_trainer.step_s(0.05)
    run = await run_processes.start_run(TrainConfig(steps=100_000, eval_interval=5, device="cpu"), name="fake")
    wait_until(lambda: run_processes.run_state(run).status == "running" and run_processes.has_checkpoint(run), 60, "a checkpoint")
    argv = json.loads((run / run_processes.LAUNCH_FILE).read_text())["argv"]
    assert argv[:2] == ["minigpt", "train"]
    run_processes.stop_run(run)  # refused unless proven_trainer accepts the fake (its command line, its lock)
    assert run_processes.wait_until_stopped(run).status == "stopped"
    stopped_at = listing.read_run(run).step
    fake_trainer.step_s(0.001)
    await run_processes.resume_run(run)
    wait_until(lambda: run_processes.run_state(run).status == "running" and listing.read_run(run).step > stopped_at + 5, 60,
               "the resumed run to go on")
    run_processes.stop_run(run)
    assert run_processes.wait_until_stopped(run).status == "stopped"
    steps = [r["step"] for r in read_metrics(run)[0]]
    assert steps == sorted(steps) and steps.count(1) == 1  # continued, never started again from zero
    assert run.parent == paths.runs_dir()


async def test_a_fake_told_to_fail_leaves_a_failed_run_with_its_traceback(fake_trainer):
    fake_trainer.fail_at(3)
    run = await run_processes.start_run(TrainConfig(steps=50, device="cpu"))
    wait_until(lambda: run_processes.run_state(run).status == "failed", 60, "the run to fail")
    assert "as the test asked" in run_processes.run_state(run).reason
    # The status is written as the exception leaves the loop; its traceback reaches stderr as the
    # process exits, a moment later (under load, after the status was read: wait for it).
    wait_until(lambda: any("FakeCrash" in line for line in run_processes.stderr_tail(run)), 60, "the traceback on stderr")
