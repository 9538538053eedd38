"""The one reader of metrics.jsonl (minigpt.runs.metrics): followed while it grows, started over
when it shrinks or is replaced, partial and damaged lines, a new header; and the seam: nothing
outside minigpt.runs opens the file."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

from minigpt.runs.files import METRICS_FILE, truncate_metrics, write_text_atomic
from minigpt.runs.metrics import RunMetrics, read_metrics
from minigpt.runs.schema import METRICS_HEADER

ROOT = Path(__file__).resolve().parent.parent
HEADER = json.dumps(METRICS_HEADER) + "\n"


def line(step: int, **values) -> str:
    return json.dumps({"step": step, "train_loss": 3.0 - step / 100, "lr": 0.01, **values}) + "\n"


def write(run: Path, text: str) -> None:
    (run / METRICS_FILE).write_text(text, encoding="utf-8")


def append(run: Path, text: str) -> None:
    with open(run / METRICS_FILE, "a", encoding="utf-8") as f:
        f.write(text)


def test_appended_records_arrive_once_each_and_a_partial_line_waits(tmp_path):
    write(tmp_path, HEADER + line(1))
    series = RunMetrics(tmp_path)
    assert series.poll() == 1
    append(tmp_path, line(20, val_loss=2.8) + '{"step": 30, "train_')  # the last line is being written
    assert series.poll() == 1
    assert series.poll() == 0
    assert (series.steps, series.val_steps, series.val_loss) == ([1, 20], [20], [2.8])
    append(tmp_path, 'loss": 2.5, "lr": 0.3}\n')
    assert series.poll() == 1 and series.latest_train_loss == 2.5 and series.steps == [1, 20, 30]
    assert not series.restarted


def test_a_file_cut_back_in_place_is_read_again_from_the_top(tmp_path):
    write(tmp_path, HEADER + "".join(line(s) for s in (1, 10, 20, 30)))
    series = RunMetrics(tmp_path)
    series.poll()
    inode = (tmp_path / METRICS_FILE).stat().st_ino
    with open(tmp_path / METRICS_FILE, "r+", encoding="utf-8") as f:  # same file, shorter
        f.truncate(len(HEADER) + len(line(1)))
    append(tmp_path, line(2))
    assert (tmp_path / METRICS_FILE).stat().st_ino == inode
    assert series.poll() == 2 and series.restarted
    assert series.steps == [1, 2]


def test_a_rewritten_file_that_grew_past_the_old_offset_is_read_from_the_top(tmp_path):
    """The defect the experiment table had: a resume replaced the file (a new inode) and the run
    logged more than was cut before the next poll, so the file was longer than the old offset and
    reading on from there spliced the middle of one file onto the other."""
    write(tmp_path, HEADER + "".join(line(s) for s in (1, 10, 20, 30)))
    series = RunMetrics(tmp_path)
    series.poll()
    old_size = (tmp_path / METRICS_FILE).stat().st_size
    truncate_metrics(tmp_path, 20)  # the resume: a new file, cut back to step 20
    append(tmp_path, "".join(line(s, elapsed_s=1.5) for s in (21, 22, 23, 24, 25)))
    assert (tmp_path / METRICS_FILE).stat().st_size > old_size
    assert series.poll() == 8 and series.restarted
    assert series.steps == [1, 10, 20, 21, 22, 23, 24, 25]


def test_a_file_rewritten_in_place_past_the_offset_is_noticed_by_its_bytes(tmp_path):
    """Same inode, longer than the offset (rewritten in place, or a new file given a freed inode):
    the bytes just before the offset tell it apart."""
    write(tmp_path, HEADER + "".join(line(s) for s in (1, 10, 20)))
    series = RunMetrics(tmp_path)
    series.poll()
    with open(tmp_path / METRICS_FILE, "w", encoding="utf-8") as f:  # truncated and refilled: same inode
        f.write(HEADER + "".join(line(s, elapsed_s=9.0) for s in (1, 2, 3, 4, 5, 6)))
    assert series.poll() == 6 and series.restarted
    assert series.steps == [1, 2, 3, 4, 5, 6]


def test_a_replaced_file_that_is_cut_back_prefix_keeps_reading_the_same_series(tmp_path):
    """A resume whose checkpoint is past everything read so far: the rewritten file starts with
    the same bytes, so reading from the top again gives the same steps, never twice."""
    write(tmp_path, HEADER + "".join(line(s) for s in (1, 10)))
    series = RunMetrics(tmp_path)
    series.poll()
    write_text_atomic(tmp_path / METRICS_FILE, HEADER + "".join(line(s) for s in (1, 10, 20)))
    series.poll()
    assert series.steps == [1, 10, 20]


def test_damaged_lines_are_skipped_and_the_rest_is_read(tmp_path):
    (tmp_path / METRICS_FILE).write_bytes(
        HEADER.encode() + line(1).encode() + b"not json\n" + b'{"step": "two"}\n' + b"[1, 2]\n"
        + b'{"step": 3, "train_loss": NaN}\n' + b"\xff\xfe\n" + b"[" * 100_000 + b"\n" + line(4).encode())
    series = RunMetrics(tmp_path)
    assert series.poll() == 3  # step 3 kept without its non-finite loss
    assert series.steps == [1, 4] and series.last["step"] == 4
    assert [r["step"] for r in read_metrics(tmp_path)[0]] == [1, 3, 4]


def test_a_new_header_in_the_middle_starts_a_new_series(tmp_path):
    write(tmp_path, HEADER + "".join(line(s) for s in (1, 10, 20)))
    series = RunMetrics(tmp_path)
    series.poll()
    append(tmp_path, HEADER + line(1) + line(2))  # a writer that began a new file here
    assert series.poll() == 2 and series.restarted
    assert series.steps == [1, 2]
    assert [r["step"] for r in read_metrics(tmp_path)[0]] == [1, 2]
    assert series.poll() == 0 and not series.restarted


def test_a_round1_file_given_a_header_by_a_resume_is_read_again(tmp_path):
    write(tmp_path, "".join(line(s) for s in (1, 10, 20, 30)))  # format 1: no header
    series = RunMetrics(tmp_path)
    series.poll()
    truncate_metrics(tmp_path, 10)
    append(tmp_path, line(11))
    series.poll()
    assert series.restarted and series.steps == [1, 10, 11]
    assert (tmp_path / METRICS_FILE).read_text().startswith(HEADER)


def test_a_file_that_disappears_and_comes_back(tmp_path):
    series = RunMetrics(tmp_path)
    assert series.poll() == 0 and not series.restarted  # not written yet
    write(tmp_path, HEADER + line(1) + line(2))
    assert series.poll() == 2
    os.remove(tmp_path / METRICS_FILE)
    assert series.poll() == 0 and series.restarted and series.steps == []
    write(tmp_path, HEADER + line(5))
    assert series.poll() == 1 and series.steps == [5]


def test_a_restart_clears_the_lists_a_chart_holds_in_place(tmp_path):
    write(tmp_path, HEADER + line(1, val_loss=2.5, tokens_per_s=100.0))
    series = RunMetrics(tmp_path)
    series.poll()
    held = (series.steps, series.train_loss, series.lr, series.val_steps, series.val_loss)
    write_text_atomic(tmp_path / METRICS_FILE, HEADER + line(7, tokens_per_s=300.0))
    series.poll()
    assert held == ([7], [2.93], [0.01], [], []) and held[0] is series.steps and held[3] is series.val_steps
    assert series.tokens_per_s == 300.0


def test_speed_is_the_median_of_the_latest_lines(tmp_path):
    write(tmp_path, HEADER + "".join(line(s, tokens_per_s=float(s)) for s in range(1, 31)))
    series = RunMetrics(tmp_path)
    series.poll()
    assert len(series.speeds) == 20 and series.tokens_per_s == 20.5  # median of 11..30


def test_one_shot_reads_return_complete_lines_and_the_offset(tmp_path):
    write(tmp_path, HEADER + line(1) + '{"step": 2')
    records, offset = read_metrics(tmp_path)
    assert [r["step"] for r in records] == [1] and offset == len(HEADER) + len(line(1))
    assert read_metrics(tmp_path / "missing") == ([], 0)


# ---------------------------------------------------------------------------- the seam

SCANNED = ("minigpt", "tui", "benchmarks", "scripts")
# Inside minigpt.runs: the writer (files.py: RunWriter, truncate_metrics) and the reader.
RUNS_MODULES_USING_THE_FILE = {"minigpt/runs/files.py", "minigpt/runs/metrics.py"}


def metrics_file_uses(source: str) -> list[int]:
    """Lines that name the metrics file: the constant METRICS_FILE (imported, or used as a name
    or attribute) or a string that is the file name or a path ending in it."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and any(a.name == "METRICS_FILE" for a in node.names):
            found.append(node.lineno)
        elif isinstance(node, ast.Name) and node.id == "METRICS_FILE":
            found.append(node.lineno)
        elif isinstance(node, ast.Attribute) and node.attr == "METRICS_FILE":
            found.append(node.lineno)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                node.value.strip() == METRICS_FILE or node.value.strip().endswith("/" + METRICS_FILE)):
            found.append(node.lineno)
    return sorted(set(found))


def test_the_checker_finds_each_way_of_naming_the_file():
    assert metrics_file_uses("from minigpt.runs.files import METRICS_FILE\n") == [1]
    assert metrics_file_uses("import x\np = x.METRICS_FILE\n") == [2]
    assert metrics_file_uses("open(d / 'metrics.jsonl')\n") == [1]
    assert metrics_file_uses("open(f'{d}/metrics.jsonl')\n") == [1]
    assert metrics_file_uses('"""Reads ``metrics.jsonl`` through minigpt.runs."""\n') == []


def test_only_minigpt_runs_opens_metrics_jsonl():
    outside, inside = [], set()
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            lines = metrics_file_uses(path.read_text(encoding="utf-8"))
            if not lines:
                continue
            if rel.startswith("minigpt/runs/"):
                inside.add(rel)
            else:
                outside += [f"{rel}:{n}" for n in lines]
    assert outside == [], f"read metrics.jsonl through minigpt.runs.metrics instead: {outside}"
    assert inside == RUNS_MODULES_USING_THE_FILE
