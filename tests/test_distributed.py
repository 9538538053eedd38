"""Data-parallel training under torchrun (2 gloo processes on 127.0.0.1), checked against one process."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from minigpt.runs.metrics import read_metrics
from minigpt.training import distributed
from tests.helpers.floats import TRAINED_WEIGHTS
from tests.helpers.ports import free_port
from tests.helpers.waiting import wait_until

REPO = Path(__file__).resolve().parent.parent

TINY = ["--d-model", "16", "--n-heads", "2", "--n-layers", "1", "--batch-size", "16", "--device", "cpu"]


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env["PYTHONPATH"] = str(REPO)
    env["OMP_WAIT_POLICY"] = "PASSIVE"  # several processes share two cores
    return env


def _train(*args, timeout=240):
    r = subprocess.run([sys.executable, "-m", "minigpt.cli", "train", *TINY, *args], cwd=REPO, env=_env(),
                       capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    return r


def test_shards_cover_the_global_batch_once():
    idx = torch.arange(7)
    parts = [distributed.shard(idx, distributed.World(r, 2)) for r in range(2)]
    assert torch.equal(torch.cat(parts), idx) and [len(p) for p in parts] == [4, 3]
    # the scaled losses of the ranks, summed as DDP's average does, give the global token mean
    means, counts = [torch.tensor(2.0), torch.tensor(4.0)], [30, 10]
    total = sum(counts)
    avg = sum(distributed.scaled_loss(m, n, total, distributed.World(r, 2)) for r, (m, n) in enumerate(zip(means, counts))) / 2
    assert avg.item() == pytest.approx((2.0 * 30 + 4.0 * 10) / 40)


def test_launcher_options():
    assert distributed.launcher_argv(2) == ["--nproc-per-node", "2", "--standalone"]
    assert distributed.launcher_argv(1, 2, 1, "10.0.0.1", 29500) == [
        "--nproc-per-node", "1", "--nnodes", "2", "--node-rank", "1", "--master-addr", "10.0.0.1",
        "--master-port", "29500", "--rdzv-conf", "timeout=120"]
    assert distributed.launcher_argv(4, 3, rdzv_endpoint="h:1", rdzv_timeout_s=30)[-6:] == [
        "--rdzv-backend", "c10d", "--rdzv-endpoint", "h:1", "--rdzv-conf", "join_timeout=30,timeout=30"]


def test_one_ddp_step_equals_one_process_on_the_same_global_batch(tmp_path, made_up_names):
    names = made_up_names
    common = ["--data", str(names), "--steps", "1", "--eval-interval", "1", "--ema", "0", "--seed", "5"]
    _train(*common, "--out", str(tmp_path / "one"))
    _train(*common, "--nproc", "2", "--out", str(tmp_path / "two"))
    one = load_file(str(tmp_path / "one" / "checkpoint" / "model.safetensors"))
    two = load_file(str(tmp_path / "two" / "checkpoint" / "model.safetensors"))
    assert one.keys() == two.keys()
    for k in one:
        assert torch.allclose(one[k], two[k], **TRAINED_WEIGHTS), k  # one batch vs two averaged halves
    status = json.loads((tmp_path / "two" / "status.json").read_text())
    assert status["world_size"] == 2 and status["state"] == "finished"
    from minigpt.runs.listing import read_run

    assert read_run(tmp_path / "two").world_size == 2  # what the panel and `minigpt runs` show
    _rank_1_wrote_nothing(tmp_path / "one", tmp_path / "two")


def _rank_1_wrote_nothing(one: Path, two: Path) -> None:
    """One writer: every metrics step once, and the files of one process's run, no more."""
    steps = [r["step"] for r in read_metrics(two)[0]]
    assert len(steps) == len(set(steps))
    assert sorted(p.name for p in two.iterdir()) == sorted(p.name for p in one.iterdir())


@pytest.mark.soak  # the long run: the 1-step test above checks the equivalence and the one writer
def test_a_ddp_run_tracks_one_process_and_rank_1_writes_nothing(tmp_path, made_up_names):
    names = made_up_names
    common = ["--data", str(names), "--steps", "50", "--eval-interval", "25", "--seed", "3"]
    _train(*common, "--out", str(tmp_path / "one"))
    _train(*common, "--nproc", "2", "--out", str(tmp_path / "two"))

    def losses(run):
        return [r["train_loss"] for r in read_metrics(run)[0] if "train_loss" in r]

    a, b = losses(tmp_path / "one"), losses(tmp_path / "two")
    assert len(a) == len(b)
    assert abs(a[-1] - b[-1]) < 0.05 and b[-1] < b[0] - 0.3
    _rank_1_wrote_nothing(tmp_path / "one", tmp_path / "two")


def test_sigterm_to_the_launcher_leaves_a_resumable_run(tmp_path, made_up_names, busy_in_soak):
    """The stop races the ranks' last steps and the checkpoint write: the soak tier runs it again with
    every core busy."""
    names = made_up_names
    run = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "minigpt.cli", "train", *TINY, "--data", str(names),
                             "--steps", "100000", "--eval-interval", "20", "--nproc", "2", "--out", str(run)],
                            cwd=REPO, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until((run / "last").exists, 120, "a checkpoint before the stop", step=0.3)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    status = json.loads((run / "status.json").read_text())
    assert status["state"] == "stopped", status
    stopped_at = status["step"]
    # resume on one process this time: the run continues from its checkpoint
    proc = subprocess.Popen([sys.executable, "-m", "minigpt.cli", "train", "--resume", str(run), "--nproc", "1", "-q"],
                            cwd=REPO, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        def progressing() -> bool:
            st = json.loads((run / "status.json").read_text())
            return st["state"] == "running" and st["step"] > stopped_at

        wait_until(progressing, 120, "the resumed run to train past the stop", step=0.3)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    st = json.loads((run / "status.json").read_text())
    assert st["step"] > stopped_at and st["world_size"] == 1


def test_two_nodes_on_one_machine_complete_a_run_and_node_0_alerts_once(tmp_path, made_up_names):
    """Each alert once, from node 0's launcher, on the terminal it runs in (a rank's output there is a
    pipe: before, rank 0 ran the command but the bell never reached the terminal)."""
    from tests.helpers.alert_recorder import recorded, recorder_command

    names = made_up_names
    run, port = tmp_path / "run", free_port()
    command, events = recorder_command(tmp_path)
    base = [sys.executable, "-m", "minigpt.cli", "train", *TINY, "--data", str(names), "--steps", "20",
            "--eval-interval", "10", "--nproc", "1", "--nnodes", "2", "--master-addr", "127.0.0.1",
            "--master-port", str(port), "--out", str(run), "-q", "--notify", "--on-event", command,
            "--target-loss", "100"]
    terminal, node0_tty = pty.openpty()  # node 0's launcher in a terminal, as the learner starts it
    seen = bytearray()
    reader = threading.Thread(target=_drain, args=(terminal, seen), daemon=True)
    reader.start()
    procs = [subprocess.Popen(base + ["--node-rank", str(r)], cwd=REPO, env=_env(), stdout=subprocess.PIPE,
                              stderr=node0_tty if r == 0 else subprocess.PIPE) for r in (0, 1)]
    os.close(node0_tty)
    outs = [p.communicate(timeout=240) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    status = json.loads((run / "status.json").read_text())
    assert status["state"] == "finished" and status["world_size"] == 2 and status["step"] == 20
    wait_until(lambda: len(recorded(events)) >= 2, timeout=30)
    reader.join(timeout=10)
    assert sorted(e["MINIGPT_EVENT"] for e in recorded(events)) == ["finished", "target_reached"]
    # each alert rang once on node 0's terminal: the bell, then OSC 9 and OSC 777 (each ends in a BEL)
    assert seen.count(b"\x1b]9;minigpt: ") == seen.count(b"\x1b]777;notify;minigpt;") == 2, bytes(seen)
    assert seen.count(b"\a") == 3 * 2


def _drain(fd: int, into: bytearray) -> None:
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the terminal's other side closed: every process writing to it ended
            break
        if not chunk:
            break
        into.extend(chunk)
    os.close(fd)
