"""The diagnosis (minigpt.training.diagnosis) on recorded run folders: each symptom named from numbers
written in the trainer's own format (``RunWriter``), with its evidence and its lesson; healthy runs,
among them a recorded default-recipe run, show none; ``minigpt diagnose`` prints the same."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from minigpt.cli.main import main
from minigpt.lessons import load_lessons
from minigpt.runs.files import RunWriter
from minigpt.runs.insight import (
    LAYERS_FILE,
    SURPRISE_FILE,
    InsightLog,
    layers_header,
    read_head_spread,
    surprise_header,
)
from minigpt.training.diagnosis import HEAD_UNIFORM, diagnose, divergence
from minigpt.training.options import TrainConfig
from tests.helpers.run_fixtures import write_insight, write_run

FIXTURES = Path(__file__).parent / "fixtures"
UNIFORM, BIGRAM = 3.29584, 2.45406  # ln 27, and the names' counted bigram


def write(root: Path, name: str, train, val: dict[int, float], *, steps: int = 1000, state: str = "finished",
          failure_reason: str | None = None, extra: dict[int, dict] | None = None) -> Path:
    """A run folder as the trainer writes it: ``train[i]`` is the train loss at step 10·(i+1)."""
    run = root / name
    run.mkdir(parents=True)
    writer = RunWriter(TrainConfig(steps=steps), run, None)
    writer.write_status(n_params=204_544, uniform_loss=UNIFORM, bigram_loss=BIGRAM)
    for i, loss in enumerate(train):
        step = 10 * (i + 1)
        record = {"step": step, "lr": 5e-3, "tokens_per_s": 30000.0, "elapsed_s": step * 0.03, "train_loss": loss}
        if step in val:
            record["val_loss"] = val[step]
        record.update((extra or {}).get(step, {}))
        writer.log(record)
    writer.write_status(state=state, step=10 * len(train), failure_reason=failure_reason)
    writer.close()
    return run


def healthy(n: int = 100) -> list[float]:
    return [round(2.0 + 1.3 * math.exp(-6 * i / n) + 0.02 * math.sin(i), 5) for i in range(n)]


def ids(run: Path) -> list[str]:
    return [s.id for s in diagnose(run)]


def test_a_healthy_curve_and_the_runs_the_screens_use_show_nothing(tmp_path):
    assert ids(write(tmp_path, "ok", healthy(), {s: 2.1 + math.exp(-6 * s / 1000) for s in range(250, 1001, 250)})) == []
    assert ids(write_run(tmp_path / "r", "plain")) == []
    assert ids(FIXTURES / "round1" / "runs" / "run-gpt") == []


def test_the_recorded_default_recipe_run_shows_no_symptom(tmp_path):
    """A real run of the default recipe (3000 steps, layer health every 25, the heads' spread at each
    evaluation), its status, metrics, layer health and surprise kept in the trainer's own files."""
    run = FIXTURES / "diagnosis" / "default-recipe"
    records = (run / "metrics.jsonl").read_text().splitlines()
    assert len(records) > 250 and (run / "layers.jsonl").stat().st_size > 0  # the whole run is there
    heads = read_head_spread(run)
    assert heads.steps[-1] == 3000 and len(heads.steps) == 12 and len(heads.spread[0]) == 4  # 4 layers × 4 heads
    assert sum(v >= HEAD_UNIFORM for row in heads.spread[-1] for v in row) == 3  # a few even heads are normal
    assert diagnose(run) == []


def test_a_loss_flat_near_ln_v_points_to_initialisation(tmp_path):
    [symptom] = diagnose(write(tmp_path, "flat", [3.30, 3.29, 3.28, 3.29, 3.27, 3.28] * 5, {300: 3.28}, state="running"))
    assert symptom.id == "flat" and symptom.lesson == "initialization"
    assert "3.28" in symptom.evidence and "ln V = 3.296" in symptom.evidence
    assert ids(write(tmp_path, "early", [3.30, 3.29, 3.28], {}, state="running")) == []  # too early to say


def test_divergence_from_the_status_from_a_nan_and_from_a_climbing_loss(tmp_path):
    failed = write(tmp_path, "failed", healthy(20), {}, state="failed",
                   failure_reason="training diverged: the loss became nan at step 201 with learning rate 3; try a lower --lr")
    nan = write(tmp_path, "nan", [3.3, 2.9, float("nan"), float("nan")], {})
    climbing = write(tmp_path, "climb", [2.8, 2.6, 2.4, 2.9, 3.6, 3.5], {})
    # as a real run at lr 10 did: thousands of nats, then back near ln V
    exploded = write(tmp_path, "exploded", [3.30427, 1922.07674, 1890.50749, 143.7, 20.6, 3.7, 3.08818], {})
    for run in (failed, nan, climbing, exploded):
        [symptom] = diagnose(run)
        assert (symptom.id, symptom.lesson) == ("diverged", "training"), run
    assert "step 30" in diagnose(nan)[0].evidence and "3.500 at step 60, up from 2.400 at step 30" in diagnose(climbing)[0].evidence
    assert diagnose(exploded)[0].evidence == "train loss 1922 at step 20, against ln V = 3.296"
    assert ids(FIXTURES / "round1" / "diverged" / "run-lr1e6") == ["diverged"]  # a recorded lr=1e6 run
    assert divergence(exploded) == "train loss 1922 at step 20, against ln V = 3.296"  # what an alert says
    assert divergence(FIXTURES / "round1" / "runs" / "run-gpt") is None


def test_val_rising_while_train_falls_is_overfitting(tmp_path):
    train = [round(3.0 - 0.015 * i, 5) for i in range(100)]
    val = {250: 2.4, 500: 2.3, 750: 2.42, 1000: 2.55}
    [symptom] = diagnose(write(tmp_path, "over", train, val))
    assert symptom.id == "overfitting" and symptom.lesson == "training"
    assert "2.550 at step 1000, up from 2.300 at step 500" in symptom.evidence
    # ten names learnt by heart (as a real run did): train far below the bigram, val far above it,
    # is overfitting only, never "slow progress, the learning rate is too low"
    by_heart = [round(max(0.3, 3.0 - 0.05 * i), 5) for i in range(40)]
    assert ids(write(tmp_path, "ten", by_heart, {20: 5.477, 200: 6.5, 400: 7.313}, steps=400)) == ["overfitting"]
    # val rising while train rises too is not overfitting; a rise of less than RISE_MARGIN is noise
    assert "overfitting" not in ids(write(tmp_path, "noise", train, {250: 2.4, 500: 2.3, 750: 2.31, 1000: 2.32}))


def test_no_better_than_the_bigram_after_half_the_budget_is_slow(tmp_path):
    train = [round(3.3 - 0.006 * i, 5) for i in range(100)]
    [symptom] = diagnose(write(tmp_path, "slow", train, {500: 2.8, 1000: 2.6}))
    assert symptom.id == "slow" and "2.600 with 204,544 parameters" in symptom.evidence and "2.454" in symptom.evidence


def test_one_jump_in_the_train_loss_is_a_spike(tmp_path):
    train = healthy()
    train[60] = train[59] + 0.9
    [symptom] = diagnose(write(tmp_path, "spike", train, {}))
    assert symptom.id == "spikes" and "step 610" in symptom.evidence


def test_a_matrix_out_of_its_optimizers_band_sample_after_sample(tmp_path):
    run = write_run(tmp_path, "odd")
    write_insight(run)  # one matrix out of band at one sample only: noise, not a symptom
    assert ids(run) == []
    (run / LAYERS_FILE).unlink()
    names = ["tok_emb.weight", "blocks.0.attn.qkv.weight", "blocks.0.attn.proj.weight", "blocks.0.ffn.up.weight",
             "blocks.0.ffn.down.weight", "head.weight"]
    log = InsightLog(run / LAYERS_FILE, layers_header(names, ["adamw", "muon", "muon", "muon", "muon", "adamw"], 25))
    for step in range(25, 301, 25):
        log.write({"step": step, "grad": [0.3] * 6, "ratio": [-3.0, -1.5, -1.6, -1.4, -3.9, -3.1]})
    log.close()
    [symptom] = diagnose(run)
    assert symptom.id == "update_ratio" and "b0.ffn.down (muon) 10^-3.9" in symptom.evidence


def write_heads(run: Path, tables: dict[int, tuple[list[list[float]], list[list[float]]]]) -> Path:
    """``surprise.jsonl`` as the trainer writes it, with each evaluation's (spread, first) per head."""
    log = InsightLog(run / SURPRISE_FILE, surprise_header(["ab"], [["a", "b", "."]]))
    for step, (spread, first) in tables.items():
        log.write({"step": step, "nll": [[1.0, 2.0, 0.5]], "heads": {"spread": spread, "first": first}})
    log.close()
    return run


def heads_run(root: Path, name: str, spread: list[list[float]], first: list[list[float]], *, last_only=False,
              steps: int = 1000) -> Path:
    """A healthy curve whose last two evaluations (or the last only) show these heads; 0.7 / 0.15 before."""
    ok = ([[0.7] * 4] * 4, [[0.15] * 4] * 4)
    run = write(root, name, healthy(), {s: 2.1 + math.exp(-6 * s / 1000) for s in range(250, 1001, 250)},
                steps=steps)
    return write_heads(run, {250: ok, 500: ok, 750: ok if last_only else (spread, first), 1000: (spread, first)})


def test_attention_heads_that_still_average_evenly_point_to_the_averaging_lesson(tmp_path):
    even = [[0.98, 0.99, 0.97, 0.96], [0.98, 0.97, 0.99, 0.96], [0.97, 0.98, 0.7, 0.6], [0.5, 0.6, 0.7, 0.6]]
    first = [[0.15] * 4] * 4
    [symptom] = diagnose(heads_run(tmp_path, "even", even, first))
    assert (symptom.id, symptom.lesson) == ("heads_uniform", "averaging-the-past")
    assert symptom.evidence.startswith("10 of 16 heads spread their attention at least 95% as evenly")
    assert "at step 1000 (b0.h0 0.98, b0.h1 0.99, b0.h2 0.97, b0.h3 0.96 and 6 more)" in symptom.evidence
    assert diagnose(heads_run(tmp_path, "once", even, first, last_only=True)) == []  # one evaluation: not yet
    few = [row[:] for row in even]
    few[1] = [0.7] * 4  # 6 of 16: below half, as the default recipe's first layer (3 of 16) is
    assert diagnose(heads_run(tmp_path, "few", few, first)) == []


def test_attention_heads_that_read_only_the_first_position_are_dead(tmp_path):
    spread = [[0.1] * 4, [0.1] * 4, [0.7] * 4, [0.7] * 4]
    first = [[0.97] * 4, [0.95, 0.93, 0.99, 0.91], [0.2] * 4, [0.3] * 4]
    [symptom] = diagnose(heads_run(tmp_path, "dead", spread, first))
    assert (symptom.id, symptom.lesson) == ("heads_dead", "multi-head-attention")
    assert symptom.evidence.startswith("8 of 16 heads put at least 90% of their weight on the first position")


def test_a_heads_record_that_is_not_layers_by_heads_of_shares_is_skipped(tmp_path):
    run = write(tmp_path, "bad", healthy(), {})
    even = [[0.99] * 4] * 4
    write_heads(run, {500: (even, [[0.1] * 4] * 4), 750: (even, [[0.1] * 3] * 4), 1000: ([[1.5] * 4] * 4, even)})
    heads = read_head_spread(run)
    assert heads.steps == [500]  # the ragged and the out-of-range records are left out
    assert diagnose(run) == []  # one evaluation left: too few to name anything


def test_every_symptom_names_a_lesson_that_exists():
    from minigpt.training import diagnosis

    assert set(diagnosis.LESSONS.values()) <= {lesson.id for lesson in load_lessons()}
    source = Path(diagnosis.__file__).read_text()
    assert source.count("Symptom(") == source.count("LESSONS[")  # each symptom takes its lesson from there


def test_minigpt_diagnose_prints_one_line_per_symptom_or_says_none(tmp_path):
    runner = CliRunner()
    over = write(tmp_path, "over", [round(3.0 - 0.015 * i, 5) for i in range(100)],
                 {250: 2.4, 500: 2.3, 750: 2.42, 1000: 2.55})
    r = runner.invoke(main, ["diagnose", str(over)])
    assert r.exit_code == 0 and r.output.count("\n") == 1 and r.output.startswith("Overfitting: val loss 2.550")
    assert r.output.rstrip().endswith("(lesson: training)")
    r = runner.invoke(main, ["diagnose", str(over), "--json"])
    [symptom] = json.loads(r.output)["symptoms"]
    assert (symptom["id"], symptom["lesson"]) == ("overfitting", "training")
    ok = shutil.copytree(FIXTURES / "round1" / "runs" / "run-gpt", tmp_path / "ok")
    r = runner.invoke(main, ["diagnose", str(ok)])
    assert r.exit_code == 0 and r.output == "ok: no symptom found\n"


@pytest.mark.parametrize("damage", ["", "not json\n", '{"format": "minigpt-metrics", "format_version": 2}\n'])
def test_a_run_without_usable_numbers_shows_nothing(tmp_path, damage):
    run = write_run(tmp_path, "x")
    (run / "metrics.jsonl").write_text(damage)
    assert diagnose(run) == []
