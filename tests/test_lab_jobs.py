"""The lessons' lab jobs: the result file, the lock, the job's state, the CLI, the served limit and
what the lesson shows before and after."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from minigpt import serving_policy
from minigpt.cli.main import main
from minigpt.control import lab_jobs
from minigpt.errors import RunBusyError, RunError
from minigpt.runs.lab import job_dir, read_result, write_result
from minigpt.runs.lock import RunLock
from minigpt.spawn import process_start_time
from minigpt.teaching.examples.catalog import render_example
from minigpt.training.memory_bench import BenchConfig, measure

TINY = BenchConfig(d_model=16, n_heads=2, n_layers=2, block_size=8, batch_size=4, repeats=1)


@pytest.fixture
def tiny_checkpointing(monkeypatch):
    monkeypatch.setitem(lab_jobs.RUNNERS, "checkpointing", lambda progress: measure(TINY, progress))


def test_every_declared_job_has_a_runner_an_example_and_a_lesson_that_shows_it():
    """A lab job is declared once (minigpt.runs.lab.JOBS); its runner, its worked example and the
    lesson that starts it are bound to that declaration by its id."""
    from minigpt.lessons import load_lessons
    from minigpt.runs.lab import JOBS
    from minigpt.teaching.examples.catalog import EXAMPLES

    def jobs_of(lesson) -> set[str]:  # front matter lab = ["job", ...] (or one name)
        value = lesson.extra.get("lab", [])
        return {value} if isinstance(value, str) else set(value)

    assert set(lab_jobs.RUNNERS) == set(JOBS)
    lessons = load_lessons()
    named = {job: [lesson for lesson in lessons if job in jobs_of(lesson)] for job in JOBS}
    for job in JOBS.values():
        assert job.example in EXAMPLES, f"{job.id}: no worked example {job.example!r}"
        assert named[job.id], f"{job.id}: no lesson names it in its front matter lab = [...]"
        assert all(job.example in lesson.example_ids() for lesson in named[job.id]), job.id
    for lesson in lessons:
        assert jobs_of(lesson) <= set(JOBS), f"{lesson.id}: an undeclared lab job"


def test_a_result_round_trips_and_foreign_files_are_refused(tmp_path):
    folder = tmp_path / "lab" / "lora"
    assert read_result(folder) is None
    write_result(folder, {"rows": [1, 2]})
    assert read_result(folder) == {"rows": [1, 2]}
    (folder / "result.json").write_text(json.dumps({"format": "minigpt-lab-result", "format_version": 9}))
    with pytest.raises(RunError, match="format 9"):
        read_result(folder)
    (folder / "result.json").write_text("{not json")
    with pytest.raises(RunError, match="unreadable"):
        read_result(folder)
    with pytest.raises(RunError, match="no lab job called 'x'"):
        job_dir("x")


def test_run_job_saves_its_result_and_a_second_run_is_refused(tiny_checkpointing):
    assert lab_jobs.job_state("checkpointing") == "not run"
    job_dir("checkpointing").mkdir(parents=True)
    with RunLock(job_dir("checkpointing")):
        assert lab_jobs.job_state("checkpointing") == "running"
        with pytest.raises(RunBusyError):
            lab_jobs.run_job("checkpointing", progress=lambda line: None)
    result = lab_jobs.run_job("checkpointing", progress=lambda line: None)
    assert result["peak_bytes"]["on"] < result["peak_bytes"]["off"]
    assert lab_jobs.job_state("checkpointing") == "done"
    assert read_result(job_dir("checkpointing"))["config"]["n_layers"] == 2


def test_the_lesson_says_how_to_start_a_job_then_shows_its_result(tiny_checkpointing):
    assert "minigpt lab run checkpointing" in render_example("checkpointing.lab")
    lab_jobs.run_job("checkpointing", progress=lambda line: None)
    shown = render_example("checkpointing.lab")
    assert "| off |" in shown and "2 layers of width 16" in shown


def test_the_lora_result_as_the_lesson_shows_it():
    write_result(job_dir("lora"), {
        "settings": {"letter": "k", "steps": 3, "batch_size": 4, "alpha": 8.0},
        "n_train": 10, "n_test": 2, "total_parameters": 100, "load_average": 1.0,
        "rows": [{"method": "base model", "trainable": 0, "letter_loss": 2.0, "all_loss": 2.0, "seconds": 0.0},
                 {"method": "LoRA r=1", "trainable": 4096, "letter_loss": 1.5, "all_loss": 2.5, "seconds": 3.0}],
        "merge": {"rank": 1, "max_logit_difference": 1e-6}})
    shown = render_example("lora.lab")
    assert "| LoRA r=1 | 4,096 | 1.5000 | 2.5000 | 3 s |" in shown and "K names" in shown


def test_the_cli_runs_and_shows_a_job(tiny_checkpointing):
    runner = CliRunner()
    before = runner.invoke(main, ["lab", "show", "checkpointing"])
    assert before.exit_code != 0 and "has not finished yet" in before.output
    ran = runner.invoke(main, ["lab", "run", "checkpointing"])
    assert ran.exit_code == 0 and "done in" in ran.output
    shown = runner.invoke(main, ["lab", "show", "checkpointing"])
    assert shown.exit_code == 0 and json.loads(shown.output)["job"] == "checkpointing"


def test_a_live_lab_job_takes_a_served_training_slot(monkeypatch, tmp_path):
    monkeypatch.setenv(serving_policy.ENV_SERVED, "1")
    monkeypatch.setenv(serving_policy.ENV_STATE_DIR, str(tmp_path / "serve-state"))
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        folder = job_dir("lora")
        folder.mkdir(parents=True)
        (folder / lab_jobs.LAUNCH_FILE).write_text(json.dumps(
            {"pid": sleeper.pid, "pid_start": process_start_time(sleeper.pid)}))
        assert lab_jobs.is_live(folder) and lab_jobs.job_state("lora") == "running"
        with serving_policy.training_slot() as register:
            register(folder)
        with pytest.raises(serving_policy.TrainingLimitReached):
            with serving_policy.training_slot():
                pass
    finally:
        sleeper.kill()
        sleeper.wait()
    assert not lab_jobs.is_live(folder)
    with serving_policy.training_slot():
        pass  # the slot is free again once the job is gone


def test_the_self_speculation_result_as_the_lesson_shows_it():
    from minigpt.teaching.examples.decoding_frontier import bundled_result

    shipped = bundled_result()  # the committed run: greedy agreed, and its figures are shown
    assert shipped["greedy"]["plain"] == shipped["greedy"]["self"]
    shown = render_example("self_speculation.lab")
    assert shown.count("The bundled run") == 1 and "minigpt lab run self-speculation" in shown
    plain, mine = shipped["plain"], shipped["self"]
    speedup = plain["seconds"] / mine["seconds"]
    assert f"| own MTP head | {mine['target_calls']:,} | {mine['tokens'] / mine['target_calls']:.2f} |" in shown
    assert f"{speedup:.2f} |" in shown and "identical name both ways" in shown
    write_result(job_dir("self-speculation"), {**shipped, "seconds": 12.0})
    assert render_example("self_speculation.lab").startswith("**Self-speculation") and \
        "Your run, 12 s" in render_example("self_speculation.lab")


@pytest.mark.soak
def test_the_self_speculation_job_runs_cut_down():
    """The real runner, a small model and few names: greedy agrees, the second head's drafts are
    counted and some are kept, and the calls fall below plain sampling's."""
    small = dict(model="gpt", d_model=32, n_heads=2, n_layers=2, batch_size=32, lr=5e-3, steps=60,
                 eval_interval=30, mtp_weight=0.3)
    result = lab_jobs.RUNNERS["self-speculation"](lambda line: None, training=small, names=30)
    assert result["greedy"]["plain"] == result["greedy"]["self"]
    assert 0 < result["self"]["accepted"] < result["self"]["drafted"]
    assert result["self"]["target_calls"] < result["plain"]["target_calls"]
    assert sum(result["rank_hits"]) <= 1


def test_the_test_time_lesson_shows_the_bundled_result_until_the_learners_own(monkeypatch):
    """The shipped result's curves are minigpt's pass@k of its own counts; the lesson shows it, with
    where it came from, until the learner's run lands."""
    from minigpt.runs.lab import bundled_dir
    from minigpt.teaching.reasoning import pass_at_k
    from minigpt.teaching.test_time import Task, measure

    shipped = read_result(bundled_dir("test-time"))
    for task in shipped["tasks"]:
        assert task["pass_at_k"] == [pytest.approx(pass_at_k(task["n"], task["right"], k)) for k in shipped["ks"]]
    before = render_example("test_time.lab")
    assert "Measured when the course was built" in before and "minigpt lab run test-time" in before
    assert "success against samples" in before and "| held-out name |" in before

    def tiny(progress):
        from minigpt.checkpoint import load_checkpoint
        from minigpt.data import load_words
        from minigpt.paths import default_checkpoint, default_dataset

        ck = load_checkpoint(default_checkpoint())
        return measure(ck.model, ck.vocab, list(load_words(default_dataset())), 42, n=8, ks=(1, 8),
                       task_list=[Task("el", "held-out"), Task("el", "rule", 5, "a")], progress=progress)

    monkeypatch.setitem(lab_jobs.RUNNERS, "test-time", tiny)
    lab_jobs.run_job("test-time", progress=lambda line: None)
    after = render_example("test_time.lab")
    assert "Your run:" in after and "| k = 1 | k = 8 |" in after and "Measured when" not in after


def test_a_job_that_trains_keeps_its_run_where_the_explorers_and_the_cli_find_it(monkeypatch):
    """A keeps_run job trains in a fresh folder that replaces the kept run only once it finished;
    the checkpoint pickers list it and `minigpt watch PATH` opens it."""
    import shutil

    import tui.launch
    from minigpt.paths import checkpoints_dir
    from minigpt.playground.checkpoint_choices import find_checkpoints
    from minigpt.runs.lab import RUN_DIR, lab_runs
    from tests.helpers.run_fixtures import write_run
    from tui.cli import main as app_main

    def trains(progress, run_dir):
        assert not run_dir.exists() and run_dir.name == f"{RUN_DIR}.new"
        write_run(run_dir.parent, run_dir.name, best_val=1.5)
        shutil.copytree(checkpoints_dir() / "induction", run_dir / "checkpoint")
        return {"steps": 1}

    monkeypatch.setitem(lab_jobs.RUNNERS, "induction", trains)
    assert "induction" in lab_jobs.KEEPS_RUN and lab_runs() == []
    first = lab_jobs.run_job("induction", progress=lambda line: None)
    kept = job_dir("induction") / RUN_DIR
    assert first["run"] == str(kept) and lab_runs() == [("induction", kept)]
    (kept / "first.txt").write_text("the first run")
    lab_jobs.run_job("induction", progress=lambda line: None)
    assert not (kept / "first.txt").exists()  # replaced by the second run
    assert not (job_dir("induction") / f"{RUN_DIR}.new").exists() and not (job_dir("induction") / f"{RUN_DIR}.old").exists()
    labels = [c.label for c in find_checkpoints() if c.path == kept / "checkpoint"]
    assert len(labels) == 1 and labels[0].startswith("lab job induction")
    opened = {}
    monkeypatch.setattr(tui.launch, "run_app", lambda **kw: opened.update(kw))
    assert CliRunner().invoke(app_main, ["watch", str(kept)]).exit_code == 0
    assert opened["initial"] == f"run:{kept.resolve()}"
def test_the_mup_and_stability_results_as_lesson_178_shows_them():
    """Until the learner runs them, the bundled results (lessons/lab/<job>/) fill the examples; a result
    of the learner's own replaces them, with its own numbers."""
    from minigpt.runs.lab import bundled_dir

    for job, words in (("mup", ("best lr", "spread (decades)", "Coordinate check", "The bundled result")),
                       ("stability", ("QK-norm", "z-loss 1e-4", "soft-cap 15", "paired t-test", "The bundled result"))):
        assert read_result(bundled_dir(job)) is not None, job
        shown = render_example(f"train_scale.{job}_lab")
        assert all(w in shown for w in words), (job, shown)
    curves = {"sp": {"curves": {"32": [2.6, 2.4, 2.5], "128": [2.4, 2.5, None]}, "best_lr": {"32": 1e-3, "128": 1e-4},
                     "spread_decades": 1.0},
              "mup": {"curves": {"32": [2.6, 2.4, 2.5], "128": [2.6, 2.4, 2.5]}, "best_lr": {"32": 1e-3, "128": 1e-3},
                      "spread_decades": 0.0}}
    check = {p: {"32": {"logits_change": 0.5}, "128": {"logits_change": 2.0 if p == "sp" else 0.5}} for p in ("sp", "mup")}
    write_result(job_dir("mup"), {**curves, "lrs": [1e-4, 1e-3, 1e-2], "steps": 7, "seed": 3, "batch_size": 4,
                                  "n_layers": 2, "base_width": 64, "coordinate_check": check, "seconds": 12.0,
                                  "load_average": 1.5})
    shown = render_example("train_scale.mup_lab")
    assert "| width 128 | 1e-4 | 1e-3 |" in shown and "grows 4.0× under SP and 1.00× under μP" in shown
    assert "Your run: 12 s" in shown and "val loss after 7 steps" in shown
