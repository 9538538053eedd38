import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from minigpt.checkpoint import load_checkpoint
from minigpt.models.config import ConfigError
from minigpt.runs import listing
from minigpt.runs.metrics import read_metrics
from minigpt.training.loop import train
from minigpt.training.options import TrainConfig
from minigpt.training.schedule import lr_at
from tests.helpers.waiting import wait_until

REPO = Path(__file__).resolve().parents[1]
CANONICAL = REPO.parent / "shared" / "data" / "names.txt"
TINY = ["--d-model", "16", "--n-heads", "2", "--n-layers", "1", "--batch-size", "32"]



@pytest.fixture
def names(tmp_path):
    p = tmp_path / "names.txt"
    p.write_text("\n".join((REPO / "data" / "names.txt").read_text().split()[:400]) + "\n")
    return p


def tiny_cfg(names, **kw):
    base = dict(d_model=16, n_heads=2, n_layers=1, batch_size=32, steps=60, eval_interval=20, log_interval=5,
                data=str(names))
    return TrainConfig(**{**base, **kw})


def cli(*args, env_dir):
    env = {**os.environ, "MINIGPT_DATA_DIR": str(env_dir), "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-m", "minigpt.cli", *args], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def read_status(run):
    return json.loads((run / "status.json").read_text())


def wait_for_metrics(run, proc, timeout=60):
    def written():
        assert proc.poll() is None, proc.communicate()
        return read_metrics(run)[0]
    return wait_until(written, timeout, "metrics written")


def test_lr_schedule():
    cfg = TrainConfig(steps=1000, lr=1.0, warmup=0.1, min_lr_ratio=0.1)
    assert lr_at(cfg, 0.05, 50, 1000) == pytest.approx(0.5)
    assert lr_at(cfg, 0.1, 100, 1000) == pytest.approx(1.0)
    assert lr_at(cfg, 0.55, 550, 1000) == pytest.approx(0.55)
    assert lr_at(cfg, 1.0, 1000, 1000) == pytest.approx(0.1)
    steps = TrainConfig(steps=100, lr=1.0, warmup=10)
    assert lr_at(steps, 0.0, 0, 100) == pytest.approx(0.1)
    assert lr_at(steps, 0.1, 10, 100) == pytest.approx(1.0)


def test_real_cli_run_writes_metrics_status_checkpoint(tmp_path, names):
    run = tmp_path / "run"
    p = cli("train", "--data", str(names), *TINY, "--steps", "40", "--eval-interval", "20", "--out", str(run),
            "--quiet", env_dir=tmp_path)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    assert "val loss" in out and "test loss" in out
    recs, offset = read_metrics(run)
    assert offset == (run / "metrics.jsonl").stat().st_size
    assert recs[-1]["step"] == 40
    assert {"step", "train_loss", "lr", "tokens_per_s", "elapsed_s"} <= set(recs[-1])
    assert [r["step"] for r in recs if "val_loss" in r] == [20, 40]
    st = read_status(run)
    assert st["state"] == "finished" and st["step"] == 40 and st["model"] == "gpt"
    assert st["n_params"] > 0 and st["device"] == "cpu" and st["test_loss"] > 0
    ck = load_checkpoint(run / "checkpoint")
    assert ck.metrics["val_loss"] == pytest.approx(st["val_loss"])
    assert ck.train_config["data"] == str(names) and ck.train_config["split_seed"] == 42
    cfg = json.loads((run / "config.json").read_text())
    assert cfg["steps"] == 40 and cfg["d_model"] == 16
    info = listing.list_runs(tmp_path / "runs") + [listing.read_run(run)]
    assert info[-1].status == "finished" and info[-1].best_val == pytest.approx(st["best_val"])


def test_sigterm_stops_cleanly_with_checkpoint(tmp_path, names):
    run = tmp_path / "run"
    p = cli("train", "--data", str(names), *TINY, "--steps", "100000", "--out", str(run), "--quiet", env_dir=tmp_path)
    try:
        wait_for_metrics(run, p)
    finally:
        p.send_signal(signal.SIGTERM)
    _out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    st = read_status(run)
    assert st["state"] == "stopped" and 0 < st["step"] < 100000
    assert load_checkpoint(run / "last").state["step"] == st["step"]
    assert load_checkpoint(run / "checkpoint").metrics["test_loss"] > 0
    assert listing.read_run(run).status == "stopped"


def test_kill_9_is_reported_failed(tmp_path, names):
    root = tmp_path / "runs"
    run = root / "killed"
    p = cli("train", "--data", str(names), *TINY, "--steps", "100000", "--out", str(run), "--quiet", env_dir=tmp_path)
    try:
        wait_for_metrics(run, p)
        wait_until(lambda: read_status(run).get("n_params") is not None, 60, "the status to name its parameters")
        assert listing.list_runs(root)[0].status == "running"
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    assert read_status(run)["state"] == "running"  # the worker had no chance to write
    info = listing.list_runs(root)[0]
    assert info.status == "failed" and info.reason == listing.DEAD_WORKER


def test_stop_then_resume_continues_schedule(tmp_path, names):
    run = tmp_path / "run"

    def stop_at_30(rec):
        if rec["step"] == 30:
            os.kill(os.getpid(), signal.SIGTERM)

    st = train(tiny_cfg(names), run, on_log=stop_at_30)
    assert st["state"] == "stopped" and st["step"] == 30
    with pytest.raises(ConfigError):
        train(None, tmp_path / "empty", resume=True)
    seen = []
    st = train(None, run, resume=True, on_log=seen.append)
    assert st["state"] == "finished" and st["step"] == 60
    assert seen[0]["step"] == 31 and seen[-1]["step"] == 60
    recs, _ = read_metrics(run)
    steps = [r["step"] for r in recs]
    assert steps == sorted(steps) and steps[-1] == 60
    # lr follows the one 60-step schedule, not a new one started at the resume.
    cfg = tiny_cfg(names)
    assert seen[0]["lr"] == pytest.approx(lr_at(cfg, 30 / 60, 30, 60))


def test_wsd_holds_the_peak_then_cools_down_linearly():
    cfg = TrainConfig(steps=1000, lr=1e-2, warmup=0.1, schedule="wsd", cooldown=0.2, min_lr_ratio=0.1)
    assert lr_at(cfg, 0.05, 50, 1000) == pytest.approx(0.5e-2)  # warmup: half way, half the peak
    assert lr_at(cfg, 0.1, 100, 1000) == lr_at(cfg, 0.8, 800, 1000) == pytest.approx(1e-2)  # stable
    assert lr_at(cfg, 0.9, 900, 1000) == pytest.approx(0.55e-2)  # half the cooldown: half way to the floor
    assert lr_at(cfg, 1.0, 1000, 1000) == pytest.approx(1e-3)
    cosine = TrainConfig(steps=1000, lr=1e-2, warmup=0.1, min_lr_ratio=0.1)
    assert lr_at(cosine, 0.55, 550, 1000) == pytest.approx(0.55e-2)  # cosine: the midpoint of the decay


def test_same_seed_reproducible(tmp_path, names):
    a = train(tiny_cfg(names, steps=20, eval_interval=10), tmp_path / "a")
    b = train(tiny_cfg(names, steps=20, eval_interval=10), tmp_path / "b")
    assert a["val_loss"] == b["val_loss"]


def test_time_budget(tmp_path, names):
    st = train(tiny_cfg(names, steps=None, time_s=1.5, eval_interval=50), tmp_path / "t")
    assert st["state"] == "finished" and st["step"] > 0 and st["time_budget_s"] == 1.5


def test_failure_is_written(tmp_path, names):
    run = tmp_path / "f"

    def boom(rec):
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        train(tiny_cfg(names), run, on_log=boom)
    st = read_status(run)
    assert st["state"] == "failed" and "disk on fire" in st["failure_reason"]
    assert listing.read_run(run).reason.endswith("disk on fire")


def test_mlp_trains(tmp_path, names):
    st = train(tiny_cfg(names, model="mlp", steps=30), tmp_path / "m")
    assert st["state"] == "finished" and st["val_loss"] < 3.3


def test_bigram_counts_and_writes_run_files(tmp_path, names):
    st = train(TrainConfig(model="bigram", data=str(names)), tmp_path / "b")
    assert st["state"] == "finished" and st["step"] == st["total_steps"] == 1
    assert (tmp_path / "b" / "metrics.jsonl").exists() and (tmp_path / "b" / "checkpoint").exists()


@pytest.mark.skipif(not CANONICAL.exists(), reason=f"canonical course dataset not found at {CANONICAL}")
def test_bigram_reaches_course_baseline(tmp_path):
    st = train(TrainConfig(model="bigram", data=str(CANONICAL)), tmp_path / "b")
    assert st["val_loss"] == pytest.approx(2.45, abs=0.03)
    assert st["test_loss"] == pytest.approx(2.45, abs=0.03)


def test_runs_read_metrics_partial_line_and_new_run_dir(tmp_path):
    run = listing.new_run_dir(tmp_path, name="x")
    assert listing.new_run_dir(tmp_path, name="x").name == "x-1"
    assert listing.new_run_dir(tmp_path).parent == tmp_path
    with open(run / "metrics.jsonl", "w") as f:
        f.write('{"step": 1}\n{"step": 2}\n{"step": 3, "train')
    recs, off = read_metrics(run)
    assert [r["step"] for r in recs] == [1, 2]
    with open(run / "metrics.jsonl", "a") as f:
        f.write('_loss": 2.0}\n')
    more, off2 = read_metrics(run, off)
    assert more == [{"step": 3, "train_loss": 2.0}] and off2 > off
    assert read_metrics(run, off2) == ([], off2)
    (run / "status.json").write_text(json.dumps({"state": "running", "pid": 2**22 + 12345,
                                                 "started_at": "2020-01-01T00:00:00+00:00"}))
    info = listing.read_run(run)
    assert info.status == "failed" and info.reason == listing.DEAD_WORKER and info.age > 0
    live = tmp_path / "live"
    live.mkdir()
    (live / "status.json").write_text(json.dumps({"state": "running", "pid": os.getpid(),
                                                  "started_at": "2030-01-01T00:00:00+00:00"}))
    assert listing.read_run(live).status == "running"
    assert listing.latest_run(tmp_path).name == "live"


def test_packed_and_trimmed_batches_train_alike(tmp_path, names):
    # Same words each step and the same maths: only float rounding differs between the two.
    packed = train(tiny_cfg(names, steps=30, eval_interval=30), tmp_path / "p")
    trimmed = train(tiny_cfg(names, steps=30, eval_interval=30, pack=False), tmp_path / "t")
    assert packed["val_loss"] == pytest.approx(trimmed["val_loss"], abs=1e-3)
