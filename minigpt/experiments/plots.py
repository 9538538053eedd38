"""The experiment's own plot, by kind, from finished runs only, with the sentences that read it.

- size: val loss against parameters on log-log axes, L(N) = a·N^(−α) + c fitted, and the course's
  "roughly a straight line" checked; at fixed compute instead, loss against size (U-shaped);
- dropout: train and val loss per rate and their gap;
- positions: val loss and the loss on names longer than any seen in training, per encoding;
- lr: final val loss against the learning rate on a log axis;
- grid: val loss per run.

The first axis is the plot's x; other axes split the runs into series.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from minigpt.errors import FitError
from minigpt.experiments.fit import fit_power_law, straight_line
from minigpt.experiments.results import ExperimentResults, RunResult
from minigpt.experiments.spec import COMPUTE_AXIS, value_text
from minigpt.text_chart import ChartSeries, bar_chart, compact_number, scatter_chart

MARKERS = ("●", "x", "+", "■", "◆", "o", "*", "#")


@dataclass
class PlotData:
    title: str
    series: list[ChartSeries] = field(default_factory=list)
    bars: list[tuple[str, list[tuple[str, float | None]]]] | None = None
    xlog: bool = False
    ylog: bool = False
    xlabel: str = ""
    ylabel: str = ""
    notes: list[str] = field(default_factory=list)
    numbers: dict = field(default_factory=dict)  # the fit and other figures, for --json

    @property
    def n_points(self) -> int:
        return sum(len(s.points) for s in self.series if not s.line)


def render(plot: PlotData, width: int = 78, height: int = 20) -> str:
    if plot.bars is not None:
        return bar_chart(plot.bars, width, title=plot.title)
    return scatter_chart(plot.series, width, height, xlog=plot.xlog, ylog=plot.ylog, title=plot.title,
                         xlabel=plot.xlabel, ylabel=plot.ylabel)


def _groups(results: ExperimentResults) -> dict[str, list[RunResult]]:
    """Finished runs grouped by the values of every axis but the first."""
    rest = results.axes[1:]
    groups: dict[str, list[RunResult]] = {}
    for r in results.runs:
        key = ", ".join(f"{a}={value_text(r.values[a])}" for a in rest) or "val loss"
        groups.setdefault(key, [])
        if r.finished and r.val_loss is not None:
            groups[key].append(r)
    return groups


def plot_data(results: ExperimentResults) -> PlotData:
    kind = results.experiment.spec.kind
    if kind == "size":
        axis = next((a for a in results.experiment.spec.axes if a.name == COMPUTE_AXIS), None)
        if axis is not None and len(axis.values) > 1:
            return _frontier_plot(results)
        if results.experiment.spec.budget.kind == "compute":
            return _compute_plot(results)
        return _size_plot(results)
    if kind == "dropout":
        return _dropout_plot(results)
    if kind == "positions":
        return _positions_plot(results)
    if kind == "lr":
        return _xy_plot(results, "lr", xlog=True, title="final val loss against peak learning rate")
    return _bars(results)


def _pending_note(results: ExperimentResults) -> list[str]:
    left = len(results.runs) - len(results.finished)
    return [f"{left} run(s) not finished yet: their points appear when they finish"] if left else []


def _size_plot(results: ExperimentResults) -> PlotData:
    plot = PlotData("val loss against parameters (log-log)", xlog=True, ylog=True, xlabel="parameters N",
                    ylabel="best val loss")
    groups = _groups(results)
    for i, (label, runs) in enumerate(groups.items()):
        plot.series.append(ChartSeries(label, MARKERS[i % len(MARKERS)], [(r.n_params, r.val_loss) for r in runs]))
    if results.experiment.spec.budget.kind == "time":
        plot.notes.append("time budget: bigger models trained on fewer tokens, so size and data are mixed")
    else:
        plot.notes.append("every run trained on the same number of tokens; each point is its best val loss")
    if len(groups) == 1:
        runs = next(iter(groups.values()))
        n = [r.n_params for r in runs]
        loss = [r.val_loss for r in runs]
        try:
            fit = fit_power_law(n, loss)
        except FitError as e:
            plot.notes.append(f"no fit yet: {e}")
        else:
            xs = np.geomspace(min(n), max(n), 40)
            plot.series.append(ChartSeries(f"fit α={fit.alpha:.3f} c={fit.c:.2f}", "", list(zip(xs, fit.predict(xs))),
                                           line=True))
            plot.notes.append(fit.describe())
            plot.numbers["fit"] = {"a": fit.a, "alpha": fit.alpha, "c": fit.c, "r2": fit.r2, "rmse": fit.rmse,
                                   "points": fit.n_points}
        try:
            line = straight_line(n, loss)
        except FitError:
            pass
        else:
            plot.notes.append(line.describe(plot.numbers.get("fit", {}).get("c")))
            plot.numbers["straight"] = {"slope": line.slope, "r2": line.r2,
                                        "roughly_straight": line.roughly_straight}
    plot.notes += _pending_note(results)
    return plot


def _compute_plot(results: ExperimentResults) -> PlotData:
    c = results.experiment.spec.budget.value
    plot = PlotData(f"val loss at fixed compute C = {compact_number(c)} FLOPs, against size", xlog=True,
                    xlabel="parameters N", ylabel="best val loss")
    for i, (label, runs) in enumerate(_groups(results).items()):
        pts = sorted((r.n_params, r.val_loss) for r in runs)
        plot.series.append(ChartSeries(label, MARKERS[i % len(MARKERS)], pts))
        if len(pts) >= 2:
            plot.series.append(ChartSeries("", "", pts, line=True))
        if pts:
            best = min(runs, key=lambda r: r.val_loss)
            plot.notes.append(f"best size at this compute: N = {best.n_params:,} ({best.steps:,} steps, "
                              f"val {best.val_loss:.4f})")
            plot.numbers.setdefault("best", []).append({"n_params": best.n_params, "val_loss": best.val_loss})
            if len(pts) >= 3:
                u_shaped = best.n_params not in (pts[0][0], pts[-1][0])
                plot.notes.append("U-shaped: smaller models lack capacity, bigger ones see too few tokens"
                                  if u_shaped else "no minimum inside the range yet: extend the sizes or the compute")
    plot.notes += _pending_note(results)
    return plot


def _frontier_plot(results: ExperimentResults) -> PlotData:
    """Loss against compute, one series per size, and their lower envelope: the compute-optimal
    frontier (which size to train for a given compute)."""
    plot = PlotData("val loss against training compute; dots: the frontier", xlog=True, ylog=True,
                    xlabel="FLOPs C (≈ 6·N·tokens)", ylabel="best val loss")
    size_axes = [a for a in results.axes if a != COMPUTE_AXIS]
    by_size: dict[str, list[RunResult]] = {}
    for r in results.runs:
        label = ", ".join(f"{a}={value_text(r.values[a])}" for a in size_axes) or "runs"
        by_size.setdefault(label, [])
        if r.finished and r.val_loss is not None:
            by_size[label].append(r)
    for i, (label, runs) in enumerate(by_size.items()):
        plot.series.append(ChartSeries(label, MARKERS[i % len(MARKERS)],
                                       sorted((r.values[COMPUTE_AXIS], r.val_loss) for r in runs)))
    finished = [r for runs in by_size.values() for r in runs]
    frontier = []
    for c in sorted({r.values[COMPUTE_AXIS] for r in finished}):
        best = min((r for r in finished if r.values[COMPUTE_AXIS] == c), key=lambda r: r.val_loss)
        frontier.append((c, best.val_loss))
        size = ", ".join(f"{a}={value_text(best.values[a])}" for a in size_axes)
        plot.notes.append(f"C = {compact_number(c)}: best {size} (N = {best.n_params:,}, val {best.val_loss:.4f})")
        plot.numbers.setdefault("frontier", []).append({"compute": c, "n_params": best.n_params,
                                                        "val_loss": best.val_loss})
    if len(frontier) >= 2:
        plot.series.append(ChartSeries("frontier", "", frontier, line=True))
    plot.notes += _pending_note(results)
    return plot


def _dropout_plot(results: ExperimentResults) -> PlotData:
    plot = PlotData("train and val loss per dropout rate", xlabel="dropout", ylabel="loss")
    runs = [r for r in results.runs if r.finished and r.val_loss is not None]
    plot.series = [ChartSeries("train (eval mode)", "t", [(r.values["dropout"], r.train_loss) for r in runs
                                                         if r.train_loss is not None]),
                   ChartSeries("val", "v", [(r.values["dropout"], r.val_loss) for r in runs])]
    gaps = [(r.values["dropout"], r.gap) for r in runs if r.gap is not None]
    if gaps:
        plot.notes.append("gap (val − train): " + ", ".join(f"{value_text(d)}: {g:+.4f}" for d, g in gaps))
        widest = max(gaps, key=lambda t: t[1])
        plot.notes.append(f"largest gap at dropout {value_text(widest[0])} (overfitting shows as a wide gap)")
        plot.numbers["gaps"] = {value_text(d): g for d, g in gaps}
    if runs:
        worst = max(runs, key=lambda r: r.val_loss)
        best = min(runs, key=lambda r: r.val_loss)
        plot.notes.append(f"lowest val at dropout {value_text(best.values['dropout'])}, highest at "
                          f"{value_text(worst.values['dropout'])}")
    plot.notes += _pending_note(results)
    return plot


def _positions_plot(results: ExperimentResults) -> PlotData:
    split = results.experiment.spec.length_split
    runs = {r.values["pos_encoding"]: r for r in results.runs if r.finished}
    long_label = f"names > {split}" if split else "long names"
    plot = PlotData("val loss and loss on longer names than any in training, per encoding")
    plot.bars = [(enc, [("val", r.val_loss), (long_label, r.long_loss)]) for enc, r in runs.items()]
    if split:
        plot.notes.append(f"trained on names of at most {split} letters; '{long_label}' is the length check")
    with_long = [(e, r.long_loss) for e, r in runs.items() if r.long_loss is not None]
    if with_long:
        best = min(with_long, key=lambda t: t[1])
        plot.notes.append(f"best on longer names: {best[0]} ({best[1]:.4f})")
    elif split:
        plot.notes.append("no name in the data is longer than the training names: no length check")
    plot.notes.append("the Curves tab overlays the val curves side by side")
    plot.notes += _pending_note(results)
    return plot


def _xy_plot(results: ExperimentResults, axis: str, *, xlog: bool, title: str) -> PlotData:
    plot = PlotData(title, xlog=xlog, xlabel=axis, ylabel="best val loss")
    for i, (label, runs) in enumerate(_groups(results).items()):
        plot.series.append(ChartSeries(label, MARKERS[i % len(MARKERS)], [(r.values[axis], r.val_loss) for r in runs]))
    finished = [r for r in results.runs if r.finished and r.val_loss is not None]
    if finished:
        best = min(finished, key=lambda r: r.val_loss)
        plot.notes.append(f"best: {axis} = {value_text(best.values[axis])} (val {best.val_loss:.4f})")
    plot.notes += _pending_note(results)
    return plot


def _bars(results: ExperimentResults) -> PlotData:
    plot = PlotData("best val loss per run")
    plot.bars = [(r.name, [("val", r.val_loss)]) for r in results.runs if r.finished]
    plot.notes += _pending_note(results)
    return plot
