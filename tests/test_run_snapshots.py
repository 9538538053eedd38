"""Weight snapshots for the step scrubber (minigpt.runs.snapshots, the trainer's SnapshotKeeper):
log-spaced steps, thinning that keeps both bounds and an even log spread, and a real run's
snapshots equal to the model it had at that step."""

from __future__ import annotations

import math
from pathlib import Path

from minigpt.runs import snapshots
from minigpt.training.insight import SnapshotKeeper

REPO = Path(__file__).resolve().parents[1]


def test_log_spaced_steps():
    assert [s for s in range(1, 200) if snapshots.is_log_step(s)] == [10, 14, 20, 28, 40, 57, 80, 113, 160]


def test_capacity_holds_both_bounds():
    assert snapshots.capacity(1_000) == snapshots.MAX_SNAPSHOTS  # small models: the count binds
    assert snapshots.capacity(8 << 20) == 8  # 64 MiB of 8 MiB snapshots
    assert snapshots.capacity(1 << 30) == 2  # always the first and the latest


def test_thinning_keeps_the_ends_and_an_even_log_spread():
    steps = list(range(10, 3001, 10))
    dropped = snapshots.to_drop(steps, 8)
    kept = sorted(set(steps) - set(dropped))
    assert len(kept) == 8 and kept[0] == 10 and kept[-1] == 3000
    gaps = [math.log(b / a) for a, b in zip(kept, kept[1:], strict=False)]
    ideal = math.log(3000 / 10) / 7
    assert max(gaps) < 2.2 * ideal  # no hole much wider than an even spread would leave


class FakeSave:
    def __init__(self, size: int):
        self.size = size

    def __call__(self, path: Path, step: int) -> None:
        path.mkdir(parents=True)
        (path / "config.json").write_text("{}")
        (path / "model.safetensors").write_bytes(b"\0" * self.size)


def test_keeper_thins_as_the_run_grows_and_stays_within_bounds(tmp_path, monkeypatch):
    monkeypatch.setattr("minigpt.training.insight.MAX_SNAPSHOTS", 6)
    keeper = SnapshotKeeper(tmp_path, FakeSave(1000))
    for step in range(1, 2001):
        if keeper.wants(step, evaluating=step % 250 == 0):
            keeper.take(step)
            on_disk = snapshots.snapshot_steps(tmp_path)
            assert len(on_disk) <= 6 and on_disk == sorted(keeper.steps)
            total = sum(snapshots.folder_bytes(snapshots.snapshot_path(tmp_path, s)) for s in on_disk)
            assert total <= snapshots.MAX_SNAPSHOT_BYTES
    kept = snapshots.snapshot_steps(tmp_path)
    assert kept[0] == 10 and kept[-1] == 2000 and len(kept) == 6
    keeper.forget_after(500)
    assert max(snapshots.snapshot_steps(tmp_path)) <= 500


def test_byte_bound_limits_large_snapshots(tmp_path, monkeypatch):
    monkeypatch.setattr("minigpt.training.insight.capacity",
                        lambda size, count: snapshots.capacity(size, count, max_bytes=10_000))
    keeper = SnapshotKeeper(tmp_path, FakeSave(3000))
    for step in (10, 14, 20, 28, 40, 57, 80):
        keeper.take(step)
    assert len(snapshots.snapshot_steps(tmp_path)) == 3  # 3 × ~3 kB ≤ 10 kB


def test_a_runs_snapshot_is_the_model_at_that_step(tmp_path):
    import torch

    from minigpt.checkpoint import load_checkpoint
    from minigpt.training.loop import train
    from minigpt.training.options import TrainConfig

    names = tmp_path / "names.txt"
    names.write_text("\n".join((REPO / "data" / "names.txt").read_text().split()[:300]) + "\n")
    cfg = TrainConfig(d_model=16, n_heads=2, n_layers=1, batch_size=16, steps=40, eval_interval=20,
                      log_interval=5, data=str(names))
    run = tmp_path / "run"
    train(cfg, run)
    assert snapshots.snapshot_steps(run) == [10, 14, 20, 28, 40]
    snap = load_checkpoint(snapshots.snapshot_path(run, 20))
    last_at_20 = load_checkpoint(run / "checkpoint")  # the best: val improves, so step 40 or 20
    assert snap.state["step"] == 20
    assert snap.model.config == last_at_20.model.config
    # the snapshot at the last evaluation holds the same weights the best checkpoint saved there
    final = load_checkpoint(snapshots.snapshot_path(run, 40))
    best = load_checkpoint(run / "checkpoint")
    if best.state["step"] == 40:
        for (n, a), (_, b) in zip(final.model.state_dict().items(), best.model.state_dict().items(), strict=True):
            assert torch.equal(a, b), n


def test_scrub_target_steps_back_from_live_and_on_to_live():
    steps = [10, 14, 20, 28]
    assert snapshots.scrub_target(steps, None, -1) == 28  # back from live: the newest snapshot
    assert snapshots.scrub_target(steps, None, 1) is None  # on from live: still live
    assert snapshots.scrub_target(steps, 20, -1) == 14 and snapshots.scrub_target(steps, 20, 1) == 28
    assert snapshots.scrub_target(steps, 10, -1) == 10  # the first stays
    assert snapshots.scrub_target(steps, 28, 1) is None  # past the newest: live
    assert snapshots.scrub_target(steps, 17, -1) == 14  # a step thinned away meanwhile
    assert snapshots.scrub_target([], 17, -1) is None and snapshots.scrub_target([], None, -1) is None


def test_run_of_checkpoint_names_the_run_and_step(tmp_path):
    run = tmp_path / "runs" / "r"
    assert snapshots.run_of_checkpoint(run / "checkpoint") == (run, None)
    assert snapshots.run_of_checkpoint(snapshots.snapshot_path(run, 200)) == (run, 200)
    assert snapshots.run_of_checkpoint(tmp_path / "checkpoints" / "default") is None
    assert snapshots.run_of_checkpoint(tmp_path / "step-00000200") is None  # not in a snapshots folder
