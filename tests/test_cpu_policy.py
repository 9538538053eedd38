"""The CPU policy: decided from what the machine does now (fake signals), and what a run really used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from minigpt.runs.metrics import read_metrics
from minigpt.training import cpu_policy
from minigpt.training.cpu_policy import CpuSample, decide, others_busy_cores, threads_for

REPO = Path(__file__).resolve().parent.parent


def test_an_idle_machine_spins_on_every_core():
    p = decide(0.1, 2)
    assert (p.wait, p.threads) == ("ACTIVE", 2)
    assert "0.1 of 2 cores" in p.describe()


def test_a_busy_machine_sleeps_and_leaves_the_busy_cores_alone():
    assert (decide(1.0, 2).wait, decide(1.0, 2).threads) == ("PASSIVE", 1)
    assert decide(2.0, 2).threads == 1  # never fewer than one thread
    assert decide(0.9, 4).threads == 3


def test_the_environment_wins_and_an_unmeasurable_machine_trains_at_full_speed():
    p = decide(1.5, 2, env_wait="passive")
    assert p.wait == "PASSIVE" and "environment" in p.reason
    assert decide(None, 2).wait == "ACTIVE"


def test_threads_follow_the_load_during_a_run():
    assert [threads_for(b, 2) for b in (0.0, 0.4, 0.6, 1.0, 1.6, 3.0)] == [2, 2, 1, 1, 1, 1]
    assert threads_for(None, 2) == 2


def test_others_cpu_use_leaves_this_process_out():
    # 2 cores, 1 s = 200 ticks; 150 busy ticks of which 100 were ours: others used half a core.
    before = CpuSample(busy_ticks=1000, total_ticks=5000, own_ticks=40, online_cores=2)
    after = CpuSample(busy_ticks=1150, total_ticks=5200, own_ticks=140, online_cores=2)
    assert others_busy_cores(before, after) == 0.5
    assert others_busy_cores(before, before) is None
    assert others_busy_cores(None, after) is None


def test_the_governor_checks_only_when_due(monkeypatch):
    samples = iter([CpuSample(0, 0, 0, 2), CpuSample(200, 200, 0, 2)])  # others kept both cores busy
    monkeypatch.setattr(cpu_policy, "read_sample", lambda: next(samples))
    g = cpu_policy.ThreadGovernor(cores=2, every_s=5.0)
    assert g.check(now=g._last_t + 1) is None
    assert g.check(now=g._last_t + 6) == 1


def test_a_real_run_records_the_policy_it_used(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env["PYTHONPATH"] = str(REPO)
    names = tmp_path / "n.txt"
    names.write_text("\n".join(["anna", "bob", "cara", "dan", "eve", "finn", "gus", "hal", "ida", "jo"] * 3))
    out = tmp_path / "run"
    r = subprocess.run([sys.executable, "-m", "minigpt.cli", "train", "--data", str(names), "--d-model", "8",
                        "--n-heads", "2", "--n-layers", "1", "--steps", "12", "--eval-interval", "6",
                        "--device", "cpu", "--out", str(out)],
                       capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert r.returncode == 0, r.stderr
    printed = next(line for line in r.stderr.splitlines() if line.startswith("cpu: "))
    status = json.loads((out / "status.json").read_text())
    assert printed == f"cpu: {status['cpu_policy']}"
    wait = "active" if "active waiting" in printed else "passive"
    assert f"OpenMP {wait} waiting" in status["cpu_policy"]
    threads_said = int(printed.split(" waiting, ")[1].split(" thread")[0])
    records = read_metrics(out)[0]
    # the first record's thread count is the one the policy set (the governor waits 5 s to change it)
    assert records[0]["threads"] == threads_said


def test_the_panel_shows_the_policy_and_the_threads_in_use():
    from tui.training.training_panel import cpu_text

    policy = "OpenMP active waiting, 2 threads (other processes used 0.1 of 2 cores at start)"
    assert cpu_text(policy, None) == "  cpu active×2"
    assert cpu_text(policy, 1) == "  cpu active×1"  # the governor cut a thread: the panel follows
    assert cpu_text(None, 2) == ""
