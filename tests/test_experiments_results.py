"""Results read back from run folders written by hand: the table, partial results, the plot (finished
runs only), the fit, the exports and the text charts."""

from __future__ import annotations

import json
import os

import pytest

from minigpt.experiments import exports, folder, plots, results
from minigpt.experiments.spec import Axis, Budget, ExperimentSpec
from minigpt.runs import listing
from minigpt.runs.files import write_text_atomic
from minigpt.text_chart import ChartSeries, bar_chart, compact_number, scatter_chart
from tests.helpers.floats import LOSS_RTOL
from tests.helpers.run_fixtures import fake_run

WORDS = ["abcd", "bcda", "cdab", "dabc", "aabb", "bbcc", "ccdd", "ddaa", "abab", "cdcd"]


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "w.txt"
    path.write_text("\n".join(WORDS), encoding="utf-8")
    return str(path)


def size_experiment(tmp_path, data):
    spec = ExperimentSpec(name="size", axes=[Axis("d_model", (8, 16, 32, 64, 128))], budget=Budget("steps", 40),
                          kind="size", derive="scaling")
    return folder.create_experiment(spec, root=tmp_path / "runs", data=data)


def test_partial_results_show_every_run_and_plot_only_finished_ones(tmp_path, data):
    exp = size_experiment(tmp_path, data)
    names = [r.name for r in exp.runs]
    fake_run(exp, names[0], "finished", 40, 2.60, train=2.55)
    fake_run(exp, names[1], "finished", 40, 2.40, train=2.38)
    fake_run(exp, names[2], "running", 20, 2.35, pid=os.getpid())  # alive: this test process
    fake_run(exp, names[3], "failed", 10, 2.90)
    res = results.collect(exp.dir)
    assert [r.status for r in res.runs] == ["finished", "finished", "running", "failed", "pending"]
    assert res.state == "not started"
    rows = results.table_rows(res)
    assert rows[2][-1] == "running" and rows[2][5] == "2.3500"  # a running run's best val so far
    assert rows[2][4].startswith("~")  # its train loss is the log's (dropout on): marked as such
    assert rows[0][6] == "+0.0500" and rows[4][2:4] == ["0/40", "0"]
    plot = plots.plot_data(res)
    drawn = [p for s in plot.series if not s.line for p in s.points]
    assert sorted(drawn) == sorted([(exp.runs[0].n_params, 2.60), (exp.runs[1].n_params, 2.40)])
    assert any("no fit yet" in n for n in plot.notes) and any("3 run(s) not finished" in n for n in plot.notes)
    # The chart marks exactly the finished runs.
    text = plots.render(plot, width=78, height=20)
    assert sum(line.count("●") for line in text.splitlines()[:-1]) == 2


def test_polling_follows_a_run_whose_metrics_a_resume_rewrote(tmp_path, data):
    """The table's cache of curves read a replaced metrics file from its old offset when the new
    file had already grown past it; the run's curve now starts over from the new file."""
    exp = size_experiment(tmp_path, data)
    name = exp.runs[0].name
    fake_run(exp, name, "running", 40, 2.50, pid=os.getpid())
    curves: dict = {}
    results.collect(exp.dir, curves)
    assert curves[name].val_steps == [20, 40]
    lines = [json.dumps({"step": s, "train_loss": 2.7, "val_loss": 2.6 - s / 1000}) + "\n" for s in range(5, 80, 5)]
    write_text_atomic(exp.run_dir(name) / "metrics.jsonl", "".join(lines))  # longer than the first file
    res = results.collect(exp.dir, curves)
    assert curves[name].val_steps == list(range(5, 80, 5))
    assert res.runs[0].steps == 75 and res.runs[0].train_running == 2.7


def test_fit_appears_with_three_finished_sizes_and_reads_the_exponent(tmp_path, data):
    exp = size_experiment(tmp_path, data)
    n = [r.n_params for r in exp.runs]
    for run, params in zip(exp.runs, n):
        fake_run(exp, run.name, "finished", 40, 3.0 * params ** -0.3 + 2.0, train=2.0)
    res = results.collect(exp.dir)
    plot = plots.plot_data(res)
    assert plot.numbers["fit"]["alpha"] == pytest.approx(0.3, abs=1e-3)
    assert plot.numbers["fit"]["c"] == pytest.approx(2.0, abs=1e-3) and plot.numbers["fit"]["points"] == 5
    assert any(s.line for s in plot.series) and "α=0.300" in plots.render(plot)
    assert any(note.startswith("log-log slope") for note in plot.notes)


def test_exports_and_listing(tmp_path, data, monkeypatch):
    exp = size_experiment(tmp_path, data)
    fake_run(exp, exp.runs[0].name, "finished", 40, 2.6, train=2.5)
    written = exports.write_exports(exp)
    assert {p.name for p in written} == set(exports.EXPORTS)
    csv_lines = (exp.dir / "results.csv").read_text().splitlines()
    assert csv_lines[0].startswith("name,axis.d_model,status,n_params") and len(csv_lines) == 6
    md = (exp.dir / "results.md").read_text()
    assert "| d_model | params |" in md and "finished" in md
    assert json.loads((exp.dir / "results.json").read_text())["runs"][0]["val_loss"] == 2.6
    # Runs inside an experiment are ordinary runs: the runs listing finds them.
    found = listing.list_runs(tmp_path / "runs")
    assert [r.name for r in found] == [exp.runs[0].name]


def test_dropout_and_positions_plots(tmp_path, data):
    spec = ExperimentSpec(name="drop", axes=[Axis("dropout", (0.0, 0.2, 0.5))], budget=Budget("steps", 20),
                          base={"d_model": 16, "n_heads": 2, "n_layers": 1}, kind="dropout")
    exp = folder.create_experiment(spec, root=tmp_path / "runs", data=data)
    for run, (train, val) in zip(exp.runs, [(2.0, 2.3), (2.1, 2.25), (2.4, 2.45)]):
        fake_run(exp, run.name, "finished", 20, val, train=train)
    plot = plots.plot_data(results.collect(exp.dir))
    assert plot.numbers["gaps"] == pytest.approx({"0": 0.3, "0.2": 0.15, "0.5": 0.05})
    assert "largest gap at dropout 0 " in " ".join(plot.notes)
    spec = ExperimentSpec(name="pos", axes=[Axis("pos_encoding", ("learned", "rope"))], budget=Budget("steps", 20),
                          base={"d_model": 16, "n_heads": 2, "n_layers": 1}, kind="positions", length_split=3)
    mixed = tmp_path / "mixed.txt"
    mixed.write_text("abc\nbca\ncab\nabcab\nbcabc\n", encoding="utf-8")
    exp = folder.create_experiment(spec, root=tmp_path / "runs", data=str(mixed))
    fake_run(exp, exp.runs[0].name, "finished", 20, 2.3, train=2.2, long=3.1)
    fake_run(exp, exp.runs[1].name, "finished", 20, 2.31, train=2.2, long=2.6)
    plot = plots.plot_data(results.collect(exp.dir))
    assert "best on longer names: rope (2.6000)" in plot.notes
    text = plots.render(plot)
    assert "learned" in text and "names > 3" in text and "3.1000" in text


def test_scatter_chart_places_points_on_log_axes():
    text = scatter_chart([ChartSeries("runs", "●", [(1e3, 3.0), (1e5, 2.0)])], width=40, height=12, xlog=True,
                         ylog=True, title="t")
    lines = text.splitlines()
    grid = [ln[9:] for ln in lines[1:-3]]
    plot_w = 40 - 9
    # The smaller model's higher loss: top row, at the left; the bigger model: bottom row, right.
    assert grid[0].index("●") <= 1 and grid[-1].index("●") >= plot_w - 2
    assert sum(row.count("●") for row in grid) == 2
    assert compact_number(12000) == "1.2e4" and compact_number(0.005) == "5e-3" and compact_number(2.134) == "2.134"
    assert "(no finished runs to plot yet)" in scatter_chart([ChartSeries("x", "●", [])])
    assert "(no finished runs" in bar_chart([("a", [("val", None)])])


def test_compute_matched_and_learning_rate_plots(tmp_path, data):
    spec = ExperimentSpec(name="iso", axes=[Axis("d_model", (8, 16, 32))], budget=Budget("compute", 1e9),
                          kind="size", derive="scaling")
    exp = folder.create_experiment(spec, root=tmp_path / "runs", data=data)
    assert exp.runs[0].steps > exp.runs[1].steps > exp.runs[2].steps  # same FLOPs: bigger, fewer steps
    for run, val in zip(exp.runs, (2.5, 2.3, 2.4)):
        fake_run(exp, run.name, "finished", run.steps, val, train=val - 0.1)
    plot = plots.plot_data(results.collect(exp.dir))
    assert plot.title.startswith("val loss at fixed compute C = 1e9 FLOPs")
    assert plot.numbers["best"] == [{"n_params": exp.runs[1].n_params, "val_loss": 2.3}]
    assert any(n.startswith("U-shaped") for n in plot.notes)
    spec = ExperimentSpec(name="lr", axes=[Axis("lr", (1e-3, 1e-2, 1e-1))], budget=Budget("steps", 20),
                          base={"d_model": 16, "n_heads": 2, "n_layers": 1}, kind="lr")
    exp = folder.create_experiment(spec, root=tmp_path / "runs", data=data)
    for run, val in zip(exp.runs, (2.6, 2.2, 3.3)):
        fake_run(exp, run.name, "finished", 20, val)
    plot = plots.plot_data(results.collect(exp.dir))
    assert plot.xlog and "best: lr = 1e-2 (val 2.2000)" in plot.notes
    assert [p[0] for p in plot.series[0].points] == [1e-3, 1e-2, 1e-1]


def test_extras_measure_train_loss_in_eval_mode_and_the_length_check(tmp_path):
    from minigpt.experiments.run_extras import compute_extras, read_extras
    from minigpt.training.loop import train
    from minigpt.training.options import TrainConfig
    from minigpt.training.schedule import evaluate

    words = ["ab", "abc", "bca", "cab", "bac", "acb", "abcab", "bcabc", "cabca", "ba", "cb", "ac"] * 3
    path = tmp_path / "w.txt"
    path.write_text("\n".join(words), encoding="utf-8")
    spec = ExperimentSpec(name="pos", axes=[Axis("pos_encoding", ("learned", "rope"))], budget=Budget("steps", 20),
                          base={"d_model": 16, "n_heads": 2, "n_layers": 1, "batch_size": 8, "device": "cpu"},
                          kind="positions", length_split=3)
    exp = folder.create_experiment(spec, root=tmp_path / "runs", data=str(path))
    run_dir = exp.run_dir(exp.runs[1])
    train(TrainConfig.from_dict(exp.runs[1].config), run_dir)
    import torch

    threads = torch.get_num_threads()
    extras = compute_extras(run_dir, exp.long_data)
    assert torch.get_num_threads() == threads  # measured on one thread, the process's setting given back
    assert read_extras(run_dir) == extras
    assert extras["long_names"] == 9 and extras["long_min_length"] == 5  # abcab, bcabc, cabca × 3
    assert 0 < extras["train_loss"] < 5 and 0 < extras["long_loss"] < 10
    # The train loss is the best checkpoint's, on the training names, with dropout off.
    from minigpt.checkpoint import load_checkpoint
    from minigpt.data import EncodedSplit, load_dataset

    ckpt = load_checkpoint(run_dir / "checkpoint")
    data = load_dataset(exp.dir / folder.SHORT_DATA, vocab=ckpt.vocab, block_size=ckpt.model_config.block_size)
    split = EncodedSplit(data.splits.train, ckpt.vocab, ckpt.model_config.block_size)
    # compute_extras evaluates on one thread; the same sums on more threads may round differently
    assert extras["train_loss"] == pytest.approx(evaluate(ckpt.model, split), rel=LOSS_RTOL)


@pytest.mark.soak  # a real (tiny) training run: 4 s on two busy cores
def test_a_sweep_run_on_generated_rows_finishes_without_name_extras(tmp_path):
    """The extras are measured on names; a run on the repeated chunks has none, and no error."""
    from minigpt.experiments.run_extras import compute_extras, read_extras
    from minigpt.training.loop import train
    from minigpt.training.options import TrainConfig

    spec = ExperimentSpec(name="rep", axes=[Axis("lr", (1e-3,))], budget=Budget("steps", 2),
                          base={"d_model": 8, "n_heads": 1, "n_layers": 1, "batch_size": 4, "block_size": 8,
                                "data_format": "repeats", "device": "cpu"})
    exp = folder.create_experiment(spec, root=tmp_path / "runs")
    run_dir = exp.run_dir(exp.runs[0])
    train(TrainConfig.from_dict(exp.runs[0].config), run_dir)
    assert compute_extras(run_dir, exp.long_data) == {} == read_extras(run_dir)


def test_a_compute_axis_gives_loss_against_compute_and_the_frontier(tmp_path, data):
    from minigpt.experiments.presets import custom_spec, parse_grid_text

    grid = parse_grid_text("d_model=8,16 compute=1e9,4e9")
    spec = custom_spec("front", grid.axes, grid.budget, grid.base)
    exp = folder.create_experiment(spec, root=tmp_path / "runs", data=data)
    assert [r.name for r in exp.runs] == ["front-d8-C1e9", "front-d8-C4e9", "front-d16-C1e9", "front-d16-C4e9"]
    steps = [r.steps for r in exp.runs]
    assert steps[1] == pytest.approx(4 * steps[0], abs=3) and steps[0] > steps[2]  # 4× the FLOPs, 4× the steps
    # Small model best at low compute, the bigger one at high compute: the frontier switches sizes.
    for run, val in zip(exp.runs, (2.5, 2.4, 2.6, 2.2)):
        fake_run(exp, run.name, "finished", run.steps, val)
    plot = plots.plot_data(results.collect(exp.dir))
    assert plot.xlog and plot.ylog and plot.title.startswith("val loss against training compute")
    assert [(f["compute"], f["val_loss"]) for f in plot.numbers["frontier"]] == [(1e9, 2.5), (4e9, 2.2)]
    assert "C = 1e9: best d_model=8" in plot.notes[0] and "C = 4e9: best d_model=16" in plot.notes[1]
    assert any(s.line and s.points == [(1e9, 2.5), (4e9, 2.2)] for s in plot.series)


def test_sweep_command_reports_lists_exports_and_refuses_clearly(tmp_path, data):
    from click.testing import CliRunner

    from tui.cli import main

    runner = CliRunner()
    for args, words in [(["sweep", "--status"], "no experiments"), (["sweep", "bogus"], "no preset called 'bogus'"),
                        (["sweep", "--axis", "d_model=8,16"], "needs a budget"),
                        (["sweep", "--axis", "d_model=8,x", "--steps", "5"], "not a whole number"),
                        (["sweep", "model_size", "--steps", "5", "--time", "3"], "one budget"),
                        (["sweep", str(tmp_path / "nope.toml")], "no such file")]:
        result = runner.invoke(main, args)
        assert result.exit_code == 2 and words in result.output and "Traceback" not in result.output, args
    spec = ExperimentSpec(name="size", axes=[Axis("d_model", (8, 16, 32))], budget=Budget("steps", 40),
                          kind="size", derive="scaling")
    exp = folder.create_experiment(spec, data=data)  # in the user's runs folder, where the command looks
    fake_run(exp, exp.runs[0].name, "finished", 40, 2.6, train=2.5)
    listed = runner.invoke(main, ["sweep", "--list"]).output
    assert "scaling_law" in listed and "size" in listed and "1/3 finished" in listed
    md = runner.invoke(main, ["sweep", "--export", "md", "size"]).output
    assert md.startswith("# size: ") and "| d_model | params |" in md
    out = tmp_path / "r.csv"
    assert runner.invoke(main, ["sweep", "--export", "csv", "size", "--out", str(out)]).exit_code == 0
    assert out.read_text().count("\n") == 4
    status = runner.invoke(main, ["sweep", "--status", "size"]).output
    assert "size: not started, 1/3 runs finished" in status and "no fit yet" in status
