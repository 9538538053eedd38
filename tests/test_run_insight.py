"""Reading surprise.jsonl and layers.jsonl (minigpt.runs.insight): damaged lines skipped, other
formats refused, records past a resumed run's checkpoint dropped, bands per optimizer."""

from __future__ import annotations

import json

import pytest

from minigpt.runs.insight import (
    LAYERS_FILE,
    SURPRISE_FILE,
    InsightLog,
    layers_header,
    optimizer_bands,
    read_layer_health,
    read_surprise,
    surprise_header,
    truncate_insight,
)
from minigpt.runs.schema import RunStatus


def test_absent_or_foreign_files_read_as_none(tmp_path):
    assert read_surprise(tmp_path) is None and read_layer_health(tmp_path) is None
    (tmp_path / SURPRISE_FILE).write_text('{"format": "something else"}\n')
    assert read_surprise(tmp_path) is None
    (tmp_path / LAYERS_FILE).write_text('{"format": "minigpt-layers", "format_version": 99}\n')
    assert read_layer_health(tmp_path) is None


def test_damaged_lines_are_skipped_and_resume_truncates(tmp_path):
    log = InsightLog(tmp_path / SURPRISE_FILE, surprise_header(["ab"], [["a", "b", "."]]))
    for step in (10, 20, 30):
        log.write({"step": step, "nll": [[1.0, 2.0, 0.5]]})
    log.close()
    with open(tmp_path / SURPRISE_FILE, "a") as f:
        f.write('{"step": 40, "nll": [[1.0]]}\n{"step": 50, "nl')  # wrong shape, then cut short
    got = read_surprise(tmp_path)
    assert got.steps == [10, 20, 30] and got.at(25) == (20, [[1.0, 2.0, 0.5]])
    truncate_insight(tmp_path, 20)
    assert read_surprise(tmp_path).steps == [10, 20]


def test_bands_are_measured_per_optimizer():
    ratios = [-1.0, -1.2, -0.9, -3.0, -3.1, -2.9, -4.5]
    opts = ["muon"] * 3 + ["adamw"] * 4
    bands = optimizer_bands(ratios, opts)
    assert bands["muon"] == pytest.approx((-2.0, 0.0))  # median −1.0 ± one decade
    assert bands["adamw"] == pytest.approx((-4.05, -2.05))  # median of −3, −3.1, −2.9, −4.5 is −3.05
    assert optimizer_bands([-1.0, -2.0], ["muon", "muon"]) == {}  # two matrices: no band


def test_a_layer_outside_its_band_is_named(tmp_path):
    log = InsightLog(tmp_path / LAYERS_FILE, layers_header(["a", "b", "c", "d"], ["adamw"] * 4, 5))
    log.write({"step": 5, "grad": [0.1, 0.2, 0.3, None], "ratio": [-3.0, -3.1, -2.9, -5.0]})
    log.close()
    health = read_layer_health(tmp_path)
    assert health.outside() == [3] and health.grad[0][3] is None


def test_status_format_2_opens_without_references_or_group():
    raw = {"format": "minigpt-run-status", "format_version": 2, "state": "finished", "name": "r", "note": ""}
    status = RunStatus.from_dict(raw)
    assert (status.uniform_loss, status.bigram_loss, status.group) == (None, None, None)
    assert json.loads(json.dumps(status.to_dict()))["format_version"] == 3
