"""The training panel's inside views (i cycles samples, surprise, layer health) with Pilot, on a
run folder holding what a trainer writes: they read only the folder, and fit 80×24."""

from __future__ import annotations

from pathlib import Path

from minigpt.runs.insight import LAYERS_FILE, InsightLog, layers_header
from tests.helpers import waiting
from tests.helpers.panel import open_panel
from tests.helpers.run_fixtures import write_insight, write_run
from tests.helpers.screen_checks import all_problems
from tui import navigation


async def test_inside_views_show_surprise_and_layer_health(tmp_path, make_app):
    app = make_app()
    run = write_run(tmp_path / "runs", "r")
    write_insight(run)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await open_panel(pilot, run)
        units = str(panel.query_one("#run-units").render())
        assert "ppl 8.17" in units and "3.03 bits/char" in units  # e^2.1 and 2.1 / ln 2
        assert "uniform 3.30" in units and "bigram 2.45" in units and "1 layer off band" in units
        chart = panel.query_one("#loss-chart")
        assert set(chart.references) == {"uniform", "bigram"}
        await waiting.until(pilot, lambda: all_problems(app) == [], 15, "a layout with no problems",
                            describe=lambda: str(all_problems(app)))

        await pilot.press("i")
        assert panel.view == "surprise"
        text = str(panel.query_one("#run-surprise").render())
        assert "step 300" in text and "ava." in text and "'a' −ln p 2.10 (p 0.12)" in text
        await pilot.press("right", "down")
        assert panel.cursor == (1, 1)
        assert "'o' −ln p 1.40 (p 0.25)" in str(panel.query_one("#run-surprise").render())
        await waiting.until(pilot, lambda: all_problems(app) == [], 15, "a layout with no problems",
                            describe=lambda: str(all_problems(app)))

        await pilot.press("i")
        assert panel.view == "layers"
        text = str(panel.query_one("#run-layers").render())
        # the median of Muon's four matrices; AdamW moves two here: too few for a band
        assert text.splitlines()[1].split() == ["muon", "-1.5±1"]
        assert "b0.ffn.down" in text and "1 outside the band" in text
        await waiting.until(pilot, lambda: all_problems(app) == [], 15, "a layout with no problems",
                            describe=lambda: str(all_problems(app)))
        await pilot.press("i")
        assert panel.view == "samples"


async def test_a_run_from_before_says_nothing_was_recorded(tmp_path, make_app):
    app = make_app()
    run = write_run(tmp_path / "runs", "old")
    async with app.run_test(size=(80, 24)) as pilot:
        await open_panel(pilot, run)
        await pilot.press("i")
        assert "not recorded for this run" in str(app.screen.panel.query_one("#run-surprise").render())
        assert app.screen.panel.query_one("#loss-chart").references == {}


async def test_the_step_scrubber_moves_every_view_to_a_snapshot(tmp_path, make_app):
    """[ and ] move samples, surprise, layer health and the charts' marker between the run's
    snapshots; the samples come from that step's snapshot; past the newest, back to live."""
    from minigpt.runs import snapshots
    from minigpt.training.loop import train
    from minigpt.training.options import TrainConfig
    names = tmp_path / "names.txt"
    names.write_text("\n".join((Path(__file__).resolve().parents[1] / "data" / "names.txt").read_text().split()[:300]) + "\n")
    run = tmp_path / "runs" / "scrub"
    train(TrainConfig(d_model=16, n_heads=2, n_layers=1, batch_size=16, steps=40, eval_interval=20,
                      log_interval=5, layer_every=5, data=str(names)), run)
    assert snapshots.snapshot_steps(run) == [10, 14, 20, 28, 40]
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await open_panel(pilot, run)
        await pilot.press("[", "[")
        assert panel.scrub_step == 28
        assert panel.query_one("#loss-chart").marker_step == 28
        assert "⏪ step 28" in str(panel.query_one("#run-units").render())
        await waiting.until(pilot, lambda: "(step 28)" in str(panel.query_one("#run-samples").render()), 60,
                            "the samples of step 28")
        assert "(step 28)" in str(panel.query_one("#run-samples").render()) and len(panel.samples) == 6
        await pilot.press("i")
        assert "step 20" in str(panel.query_one("#run-surprise").render())  # the last evaluation ≤ 28
        await pilot.press("i")
        assert "step 25" in str(panel.query_one("#run-layers").render())  # the last sample ≤ 28
        await waiting.until(pilot, lambda: all_problems(app) == [], 15, "a layout with no problems",
                            describe=lambda: str(all_problems(app)))
        await pilot.press("]", "]")
        assert panel.scrub_step is None and panel.query_one("#loss-chart").marker_step is None

        # a: the trained heads at the step shown, from that step's snapshot; [ there moves both
        await pilot.press("[", "[")
        assert panel.scrub_step == 28
        await pilot.press("a")
        heads = app.screen
        assert navigation.is_screen(heads, "explorer.trained")
        await _wait_for_maps(pilot, heads, snapshots.snapshot_path(run, 28), "ana")
        assert "⏪ step 28" in str(heads.query_one("#tr-status").render())
        assert all_problems(app) == []
        # a focused head scrolls the status line away at 80×24: its own title names the step
        heads.query_one("AttentionGrid").focus()
        await pilot.press("enter")
        assert heads.query_one("#tr-focus").panel.name == "layer 0 head 0 · step 28"
        await pilot.press("[")
        await _wait_for_maps(pilot, heads, snapshots.snapshot_path(run, 20), "ana")
        assert heads.query_one("#tr-focus").panel.name == "layer 0 head 0 · step 20"
        await pilot.press("escape")  # closes the focused head
        await pilot.press("escape")
        assert app.screen.panel is panel and panel.scrub_step == 20
        assert panel.query_one("#loss-chart").marker_step == 20


async def _wait_for_maps(pilot, screen, checkpoint_path, name):
    """Wait until ``screen`` shows the attention maps of the checkpoint at ``checkpoint_path``
    on ``name`` (what that checkpoint's own model computes)."""
    import torch

    from minigpt.checkpoint import load_checkpoint

    ckpt = load_checkpoint(checkpoint_path)
    ids = [0] + ckpt.vocab.encode(name)
    want = ckpt.model.attention_maps(torch.tensor([ids])).double()
    screen.query_one("#tr-name").value = name

    def shows_them() -> bool:
        # Under load the maps of the name shown before (another length) can land after the new
        # name was typed: a different shape is "not yet", not an error.
        shown = None if screen.maps is None else torch.tensor(screen.maps, dtype=torch.float64)
        return shown is not None and shown.shape == want.shape and torch.allclose(shown, want, atol=1e-6)

    await waiting.until(pilot, shows_them, 30, f"the heads of {checkpoint_path} on {name!r}")


async def test_a_four_layer_models_layer_health_shows_every_matrix_at_80x24(tmp_path, make_app):
    """The form's default model has 4 layers: 19 matrices, a line each, ran past the side column
    at 80×24 (b2.ffn.down, all of block 3 and the head were cut off, with no way to scroll to
    them). Two share a line when the lines run short; the head and its band flag stay in sight."""
    app = make_app()
    run = write_run(tmp_path / "runs", "r")
    write_insight(run)
    (run / LAYERS_FILE).unlink()  # a 4-layer model's log instead of the one-block one
    names = ["tok_emb.weight", "pos_emb.weight"] + [f"blocks.{b}.{m}.weight" for b in range(4) for m in
                                                    ("attn.qkv", "attn.proj", "ffn.up", "ffn.down")] + ["head.weight"]
    optimizers = ["adamw", "adamw"] + ["muon"] * 16 + ["adamw"]
    log = InsightLog(run / LAYERS_FILE, layers_header(names, optimizers, 25))
    for step in range(25, 301, 25):
        log.write({"step": step, "grad": [0.1] * 19, "ratio": [-3.0, -3.0] + [-1.5] * 15 + [-4.5, -3.0]})
    log.close()
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await open_panel(pilot, run)
        await pilot.press("i", "i")
        assert panel.view == "layers"
        view = panel.query_one("#run-layers")
        await waiting.until(pilot, lambda: view.content_size.height > 0 and str(view.render()).strip(), 15,
                            "the layers view to draw")
        lines = str(view.render()).splitlines()
        assert len(lines) <= view.content_size.height, lines
        text = "\n".join(lines)
        for name in ("tok_emb", "b0.qkv", "b3.up", "b3.down", "head"):
            assert name in text, (name, text)
        assert "b3.down" in next(ln for ln in lines if "!" in ln and "b3.down" in ln)  # off its band: flagged
        assert all_problems(app) == []


async def test_a_reattached_run_never_says_samples_come_after_the_first_evaluation(tmp_path, make_app):
    """`minigpt watch` on a run with evaluations behind it showed "Samples: after the first
    evaluation" for the seconds its first sample took to load (found on the done-when walk)."""
    import shutil

    from minigpt import paths

    app = make_app()
    run = write_run(tmp_path / "runs", "r", state="running")
    shutil.copytree(paths.checkpoints_dir() / "default", run / "checkpoint")
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await open_panel(pilot, run)
        evals = len(panel.series.val_loss)
        assert evals > 1
        text = str(panel.query_one("#run-samples").render())
        assert "after the first evaluation" not in text and f"(eval {evals})" in text
        await waiting.until(pilot, lambda: panel.samples, 60, "the samples")
        assert len(panel.samples) == 6 and "sampling…" not in str(panel.query_one("#run-samples").render())
