"""Interview questions from the learner's own runs (minigpt.study.run_questions): each worked
number recomputed here from the run folder's files, the seed-group question asked as a given only
when the t-test says the groups differ, and the interview plan asking them with the numbers."""

from __future__ import annotations

import json
import math

from minigpt.runs.listing import list_runs, read_run
from minigpt.significance import welch_t_test
from minigpt.study import interview
from minigpt.study.run_questions import ALPHA, group_question, questions_for_run, questions_for_runs
from tests.helpers.run_fixtures import grouped_run, write_run

LN_27 = math.log(27)


def _run_with_uniform(root, folder="20260105-100200", **kw):
    run = write_run(root, folder, **kw)
    status = json.loads((run / "status.json").read_text())
    status.update(format="minigpt-run-status", format_version=3, name="my gpt", note="", world_size=1,
                  uniform_loss=LN_27)
    status.pop("error", None)
    (run / "status.json").write_text(json.dumps(status))
    return run


def _records(run):
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def test_a_run_gives_bits_per_character_the_start_near_ln_v_and_the_gap_with_its_numbers(tmp_path):
    run = _run_with_uniform(tmp_path, steps=300, best_val=2.1, start_loss=3.3)
    records = _records(run)
    val = [r for r in records if "val_loss" in r]
    final, first = val[-1]["val_loss"], records[0]
    bits, start, gap = questions_for_run(read_run(run))

    assert f"{final:.3f} nats" in bits.prompt and f"{final / math.log(2):.3f} bits per character" in bits.answer
    assert bits.lesson == "the-loss" and len(bits.rubric) == 3 and "ln 2" in bits.rubric[0]

    assert f"step {first['step']}" in start.prompt and f"{first['train_loss']:.3f}" in start.prompt
    assert "V = 27" in start.prompt and f"{LN_27:.3f}" in start.prompt and "uniform" in start.answer
    assert f"{first['train_loss'] - LN_27:+.3f}" in start.answer

    last = val[-1]
    want = last["val_loss"] - last["train_loss"]
    assert f"At step {last['step']}" in gap.prompt and f"{want:+.3f}" in gap.prompt
    assert gap.lesson == "training" and f"{want:+.3f}" in gap.rubric[0]
    # the fixture's train curve sits 0.05 below val, plus a wiggle: the rubric reads the gap's sign
    assert ("overfit" in gap.rubric[1]) == (want > 0.02)


def test_a_run_without_ln_v_or_metrics_asks_only_what_its_folder_answers(tmp_path):
    run = write_run(tmp_path, "20260105-100000", steps=300)
    assert [q.id.rpartition(":")[2] for q in questions_for_run(read_run(run))] == ["bits", "gap"]
    (run / "metrics.jsonl").write_text("")
    assert [q.id.rpartition(":")[2] for q in questions_for_run(read_run(run))] == ["bits"]  # status's val_loss


def test_two_seed_groups_that_differ_are_asked_about_the_difference(tmp_path):
    a, b = [2.00, 2.01, 1.99], [2.20, 2.21, 2.19]
    test = welch_t_test(a, b)
    assert test.p < ALPHA
    q = group_question("small", a, "large", b)
    assert "small is better beyond its seed noise" in q.prompt and f"p = {test.p:.3g}" in q.answer
    assert q.lesson == "model-comparison"


def test_two_seed_groups_within_noise_are_asked_whether_they_differ(tmp_path):
    a, b = [2.00, 2.10, 1.95], [2.02, 2.12, 1.97]
    test = welch_t_test(a, b)
    assert test.p >= ALPHA
    q = group_question("small", a, "large", b)
    assert "Does one setting beat the other?" in q.prompt and "better beyond" not in q.prompt
    assert q.answer.startswith("Not shown") and f"p = {test.p:.3g}" in q.answer


def test_the_runs_folder_gives_questions_per_run_and_one_for_the_seed_groups(tmp_path):
    for i, (group, val) in enumerate([("lr3", 2.00), ("lr3", 2.01), ("lr5", 2.20), ("lr5", 2.21)]):
        grouped_run(tmp_path, f"2026010{i + 1}-100000", group, seed=i, best_val=val)
    questions = questions_for_runs(list_runs(tmp_path))
    groups = [q for q in questions if q.id.startswith("run:groups:")]
    assert len(groups) == 1 and "better beyond its seed noise" in groups[0].prompt
    assert len({q.id for q in questions}) == len(questions) == 3 * 2 + 1  # bits and gap for the latest 3


def test_an_interview_with_runs_asks_about_them_with_their_numbers(tmp_path):
    run = _run_with_uniform(tmp_path, steps=300, best_val=2.1)
    asked = questions_for_runs(list_runs(tmp_path))
    plan = interview.plan([], ["the-loss", "training"], {}, minutes=10, run_questions=asked, seed=3)
    assert plan and {q.kind for q in plan} == {"run"} and "run" in interview.RUBRIC_KINDS
    final = [r for r in _records(run) if "val_loss" in r][-1]["val_loss"]
    assert any(f"{final:.3f}" in q.prompt and q.rubric and q.answer for q in plan)
    assert len({q.prompt for q in plan}) == len(plan)  # none asked twice
    assert interview.plan([], ["the-loss"], {}, minutes=10, seed=3) == []  # no runs, no cards: nothing to ask


def test_a_diverged_run_asks_nothing_about_its_nan_losses(tmp_path):
    run = _run_with_uniform(tmp_path, steps=100)
    records = _records(run)
    for r in records:
        r.update({k: float("nan") for k in ("train_loss", "val_loss") if k in r})
    (run / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    status = json.loads((run / "status.json").read_text())
    status.update(val_loss=None)
    (run / "status.json").write_text(json.dumps(status))
    assert questions_for_run(read_run(run)) == []
