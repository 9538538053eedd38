"""The machine beside the loss (issue 50, item 2): the trainer's CPU, threads and memory through
psutil (minigpt.processes), steps/s and time left, and the GPU through NVML (faked here: it is never
a dependency) or else the trainer's torch counters, on one line of the panel at 80×24."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import types

from minigpt import machine, processes
from tests.helpers import waiting
from tests.helpers.panel import open_panel
from tests.helpers.run_fixtures import a_training_run
from tests.helpers.screen_checks import all_problems


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_the_usage_sampler_reads_this_process_at_most_once_a_second():
    clock = Clock()
    sampler = processes.UsageSampler(os.getpid(), clock=clock)
    first = sampler.sample()
    assert first.threads >= 1 and first.rss_bytes > 10 * 2**20 and first.cpu_percent >= 0
    reads = []
    sampler._process = types.SimpleNamespace(  # counts the reads a real sample would make
        oneshot=contextlib.nullcontext, cpu_percent=lambda interval: 50.0, num_threads=lambda: 3,
        memory_info=lambda: reads.append(1) or types.SimpleNamespace(rss=123 * 2**20))
    clock.now += 0.4  # the panel polls every 0.4 s: the last sample is answered
    assert sampler.sample() is first and reads == []
    clock.now += 0.7
    assert sampler.sample().rss_bytes == 123 * 2**20 and reads == [1]


def test_a_process_that_is_gone_has_no_usage():
    assert processes.UsageSampler(2**22 + 7).sample() is None


def fake_nvml(monkeypatch, fail_init=False):
    """A stand-in for nvidia-ml-py's pynvml: one GPU at 87 %, 3 of 80 GiB, 61 °C."""
    module = types.ModuleType("pynvml")
    module.NVML_TEMPERATURE_GPU = 0

    def init():
        if fail_init:
            raise RuntimeError("NVML Shared Library Not Found")

    module.nvmlInit = init
    module.nvmlDeviceGetHandleByIndex = lambda index: f"gpu{index}"
    module.nvmlDeviceGetUtilizationRates = lambda h: types.SimpleNamespace(gpu=87, memory=40)
    module.nvmlDeviceGetMemoryInfo = lambda h: types.SimpleNamespace(used=3 * 2**30, total=80 * 2**30, free=77 * 2**30)
    module.nvmlDeviceGetTemperature = lambda h, sensor: 61
    monkeypatch.setitem(sys.modules, "pynvml", module)
    return module


def test_nvml_gives_utilisation_memory_and_temperature(monkeypatch):
    fake_nvml(monkeypatch)
    gpu = machine.GpuSampler().sample()
    assert gpu == machine.GpuUsage(87.0, 3 * 1024.0, 80 * 1024.0, 61.0, "nvml")
    assert machine.machine_line(None, None, None, gpu) == "gpu 87% 3.0/80 GB 61°C"


def test_without_nvml_the_trainers_torch_counters_stand_in(monkeypatch):
    fake_nvml(monkeypatch, fail_init=True)
    assert not machine.GpuSampler().available and machine.GpuSampler().sample() is None
    monkeypatch.setitem(sys.modules, "pynvml", None)  # not installed: the import fails
    assert not machine.GpuSampler().available
    gpu = machine.torch_gpu_usage({"step": 10, "cuda_mem_mb": 512.0, "cuda_peak_mb": 700.0})
    assert machine.machine_line(None, None, None, gpu) == "gpu 512 MB (torch)"
    assert machine.torch_gpu_usage({"step": 10}) is None


def test_steps_per_second_and_the_line():
    records = [{"step": s, "elapsed_s": s * 0.08} for s in range(10, 70, 10)]
    assert machine.steps_per_second(records) == 12.5  # 10 steps every 0.8 s
    assert machine.steps_per_second(records[:1]) is None
    usage = processes.Usage(187.4, 8, 412 * 2**20)
    gpu = machine.GpuUsage(87.0, 3 * 1024.0, 80 * 1024.0, 61.0, "nvml")
    line = machine.machine_line(usage, 12.5, "1m20s", gpu)
    assert line == "cpu 187% 8 thr · 412 MB · 12.5 steps/s · 1m20s left · gpu 87% 3.0/80 GB 61°C"
    assert len(line) <= 78  # one line of the panel at 80 columns


async def test_the_panel_shows_the_trainers_machine_line_at_80x24_while_it_runs(monkeypatch, make_app):
    fake_nvml(monkeypatch)
    run = a_training_run()  # running, held by this process: its figures are this test's own
    status = json.loads((run / "status.json").read_text())
    status["device"] = "cuda"
    (run / "status.json").write_text(json.dumps(status))
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await open_panel(pilot, run)
        line = panel.query_one("#run-machine")
        await waiting.until(pilot, lambda: " thr · " in str(line.render()), 15, "the machine line")
        text = str(line.render())
        assert text.startswith("cpu ") and " MB" in text and "steps/s" in text and "left" in text
        assert "gpu 87% 3.0/80 GB 61°C" in text
        await waiting.until(pilot, lambda: all_problems(app) == [], 15, "a layout with no problems",
                            describe=lambda: str(all_problems(app)))
        status.update(state="finished", pid=None, val_loss=2.1, test_loss=2.08)  # over: the line goes
        (run / "status.json").write_text(json.dumps(status))
        await waiting.until(pilot, lambda: not line.display, 15, "the machine line to go")
