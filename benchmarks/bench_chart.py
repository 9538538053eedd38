"""Redraw time of the training loss chart with 100k points (prints figures; not a test).

Run: python benchmarks/bench_chart.py
It measures, in a headless app at 80x24 and 160x48: downsampling 100k points to the chart's
budget, one full redraw (downsample + plotext build), and the same without downsampling.
"""

from __future__ import annotations

import asyncio
import math
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from textual.app import App, ComposeResult

from minigpt.control.run_processes import downsample
from tui.common.loss_chart import LossChart

N = 100_000


def fake_losses(n: int) -> tuple[list[int], list[float]]:
    rng = random.Random(0)
    xs = list(range(1, n + 1))
    ys = [2.0 + 1.3 * math.exp(-i / (n / 8)) + rng.gauss(0, 0.05) for i in xs]
    return xs, ys


class ChartApp(App):
    def compose(self) -> ComposeResult:
        yield LossChart("loss", id="chart")


def timed(fn, repeat: int = 5) -> float:
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - t) * 1000)
    return statistics.median(runs)


async def measure(size: tuple[int, int]) -> None:
    xs, ys = fake_losses(N)
    app = ChartApp()
    async with app.run_test(size=size) as pilot:
        chart = app.query_one(LossChart)
        await pilot.pause()
        chart.set_series("train", xs, ys, label="train")
        budget = chart.points_budget()
        ds = timed(lambda: downsample(xs, ys, budget))

        def full_redraw():
            chart._redraw()
            chart.render()

        redraw = timed(full_redraw)
        points = len(chart.drawn["train"][0])

        def no_downsampling():
            chart._frame = None
            chart.plt.clear_data()
            chart.plt.plot(xs, ys)
            chart.render()

        raw = timed(no_downsampling, repeat=2)
        def build_only():
            chart._frame = None  # defeat the frame cache: measure plotext's build itself
            chart.render()

        chart._redraw()  # back to the downsampled series
        build = timed(build_only)
        width, height = chart.size.width, chart.size.height
    print(f"app {size[0]}x{size[1]}: chart {width}x{height}, {N:,} points -> {points} drawn; "
          f"downsample {ds:.1f} ms, plotext build {build:.1f} ms, full redraw {redraw:.1f} ms; "
          f"without downsampling {raw:.0f} ms")


if __name__ == "__main__":
    for size in ((80, 24), (160, 48)):
        asyncio.run(measure(size))
