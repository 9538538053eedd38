"""Line-per-record files the app follows, and numbers from files and URLs (issue 44 item 9).

A run's metrics.jsonl, surprise.jsonl and layers.jsonl and an experiment's events.jsonl may hold any
line: JSON nested past Python's limit, a line of megabytes, NaN, a step of 10**400, a loss of
1e308 (e^loss overflows), an elapsed time of 1e308 (the ETA overflows), text where a number goes.
Each such line, or number, is skipped and the rest read; a width from the served page's URL is
clamped like a resize frame's."""

from __future__ import annotations

import json
import math

import pytest

from minigpt.runs import insight, metrics
from minigpt.runs.metrics import RunMetrics, read_metrics

GOOD = [{"step": 1, "train_loss": 3.0, "lr": 0.01, "elapsed_s": 1.0, "tokens_per_s": 100.0},
        {"step": 2, "train_loss": 2.5, "val_loss": 2.6, "lr": 0.01, "elapsed_s": 2.0}]
DEEP = "[" * 100_000
BAD_LINES = [
    DEEP,                                            # RecursionError in json.loads
    '{"step": ' + "9" * 400 + "}",                   # a step no run reaches
    '{"step": -1, "train_loss": 1.0}',
    '{"step": true}',
    '{"step": 1.5}',
    '"just a string"',
    "NaN",
    '{"step": 3, "x": ' + "1" * 5000 + "}",          # an int json refuses to parse (over 4300 digits)
    '{"step": 4, "pad": "' + "a" * (2 << 20) + '"}',  # a line of megabytes
]
# Numbers out of their range: the record keeps its step, the number is dropped.
OUT_OF_RANGE = {"train_loss": 1e308, "val_loss": -3.0, "lr": float("inf"), "elapsed_s": 1e308,
                "tokens_per_s": "fast", "threads": "[red]8", "compile_s": -1, "skipped_steps": 1.5}


def _write(path, lines) -> None:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def test_any_bad_line_is_skipped_and_the_good_ones_read(tmp_path):
    lines = [json.dumps(GOOD[0]), *BAD_LINES, json.dumps(GOOD[1])]
    _write(tmp_path / "metrics.jsonl", lines)
    records, end = read_metrics(tmp_path)
    assert [r["step"] for r in records] == [1, 2] and end == (tmp_path / "metrics.jsonl").stat().st_size
    followed = RunMetrics(tmp_path)
    assert followed.poll() == 2 and followed.steps == [1, 2] and followed.val_loss == [2.6]


@pytest.mark.parametrize(("key", "value"), OUT_OF_RANGE.items())
def test_a_number_out_of_its_range_is_dropped_and_the_record_kept(tmp_path, key, value):
    _write(tmp_path / "metrics.jsonl", [json.dumps({"step": 5, "note": "kept", key: value}, allow_nan=True)])
    [record], _ = read_metrics(tmp_path)
    assert record == {"step": 5, "note": "kept"}


def test_a_huge_elapsed_time_no_longer_overflows_the_eta(tmp_path):
    from minigpt.control.run_processes import format_duration, progress
    from minigpt.runs.listing import RunInfo

    _write(tmp_path / "metrics.jsonl", [json.dumps({"step": 10, "elapsed_s": 1e308})])
    [record], _ = read_metrics(tmp_path)
    info = RunInfo(name="r", path=tmp_path, status="running", step=10, total=100)
    fraction, eta = progress(info, record)
    assert fraction == 0.1 and format_duration(eta) == "–"


def test_a_line_longer_than_one_read_is_passed_over_in_pieces(tmp_path, monkeypatch):
    monkeypatch.setattr(metrics, "READ_BYTES", 4096)
    path = tmp_path / "metrics.jsonl"
    follower = RunMetrics(tmp_path)
    _write(path, [json.dumps(GOOD[0])])
    assert follower.poll() == 1
    with path.open("a", encoding="utf-8") as f:
        f.write('{"step": 9, "pad": "' + "b" * 20_000)  # still being written, and far longer than a read
    for _ in range(8):
        assert follower.poll() == 0
    with path.open("a", encoding="utf-8") as f:
        f.write('"}\n' + json.dumps(GOOD[1]) + "\n")
    while follower.poll():
        pass
    assert follower.steps == [1, 2] and not follower.restarted
    assert follower.follower.offset == path.stat().st_size


def test_loss_units_of_a_huge_loss_are_infinite_not_an_error():
    assert insight.loss_units(1e6)[0] == math.inf
    assert insight.loss_units(1.0)[0] == pytest.approx(math.e)


def _insight_file(tmp_path, name, header, records):
    _write(tmp_path / name, [json.dumps(header)] + records)


def test_surprise_and_layer_files_survive_any_line(tmp_path):
    header = insight.surprise_header(["ab"], [["a", "b"]])
    good = json.dumps({"step": 3, "nll": [[0.5, 1.5]]})
    _insight_file(tmp_path, insight.SURPRISE_FILE, header, [
        DEEP, "{" * 50_000, '{"step": ' + "9" * 30 + ', "nll": [[1, 1]]}', '{"step": 4, "nll": [[1e308, 1]]}',
        '{"step": 5, "nll": [[-1, 1]]}', '{"step": 6, "nll": [["x", 1]]}', '{"step": 7, "nll": [[NaN, 1]]}',
        "x" * (2 << 20), good])
    surprise = insight.read_surprise(tmp_path)
    assert surprise.steps == [3] and surprise.nll == [[[0.5, 1.5]]]
    layers = insight.layers_header(["w1", "w2"], ["adamw", "adamw"], every=10)
    _insight_file(tmp_path, insight.LAYERS_FILE, layers, [
        DEEP, '{"step": 10, "grad": [1e300, 0.5], "ratio": [-1e9, -3.0]}', '{"step": 20, "grad": "x", "ratio": []}'])
    health = insight.read_layer_health(tmp_path)
    assert health.steps == [10] and health.grad == [[None, 0.5]] and health.ratio == [[None, -3.0]]


@pytest.mark.parametrize("header", [DEEP, '{"format": "minigpt-layers", "format_version": 1, "names": ["w"], '
                                          '"optimizers": ["adamw"], "every": 100000000000000000000}'],
                         ids=["nested", "every-1e20"])
def test_an_insight_file_with_a_bad_header_reads_as_absent(tmp_path, header):
    _write(tmp_path / insight.LAYERS_FILE, [header])
    assert insight.read_layer_health(tmp_path) is None


def test_an_experiments_events_and_control_files_survive_deep_nesting(tmp_path):
    from minigpt.experiments import folder

    _write(tmp_path / folder.EVENTS_FILE, [DEEP, json.dumps({"event": "failed", "run": "r1"})])
    assert folder.read_events(tmp_path) == [{"event": "failed", "run": "r1"}]
    (tmp_path / folder.CONTROL_FILE).write_text(DEEP, encoding="utf-8")
    assert folder.read_control(tmp_path) == "run"


@pytest.mark.parametrize(("text", "side"), [("80", 80), ("1000000000", 1000), ("-5", 1), ("0", 1), ("wide", 24),
                                            ("1e9", 24), ("", 24), (None, 24), ("9" * 5000, 1000), (" 120 ", 120)],
                         ids=lambda v: repr(v)[:12])
def test_a_terminal_size_from_the_url_is_clamped(text, side):
    from tui.browser.serve_server import terminal_side

    assert terminal_side(text, 24) == side


@pytest.mark.parametrize(("field", "value"), [("step", 10**400), ("total_steps", 10**13), ("best_val", 1e300),
                                              ("time_budget_s", -1e300), ("pid", 2**80)])
def test_a_status_number_out_of_range_marks_the_run_broken_not_the_progress_bar(tmp_path, field, value):
    from minigpt.control.run_processes import progress
    from minigpt.runs import listing

    run = tmp_path / "r1"
    run.mkdir()
    (run / "config.json").write_text("{}", encoding="utf-8")
    status = {"state": "running", "step": 3, "total_steps": 3, "model": "gpt", field: value}
    (run / "status.json").write_text(json.dumps(status), encoding="utf-8")
    [info] = listing.list_runs(tmp_path)
    assert info.status == "broken" and field in info.reason
    progress(info, {})
