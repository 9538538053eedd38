"""The positions, norms, tokens and scaling explorers on a trained model, driven at 80×24: ctrl+l
opens the same picker as the stepper and the parameter counter, and what each screen shows equals
what the checkpoint's tensors give (read here straight from its safetensors file); a bigram model
and a damaged folder get a one-line reason and the screen goes on."""

from __future__ import annotations

import pytest
import torch
from safetensors.torch import load_file

from minigpt import paths
from minigpt.checkpoint import WEIGHTS, save_checkpoint
from minigpt.data import Vocab
from minigpt.models.config import GPTConfig
from minigpt.models.gpt import MiniGPT
from minigpt.teaching.stepper import fmt
from tests.helpers import waiting
from tests.helpers.screen_checks import all_problems
from tui import navigation
from tui.common.matrix_view import MatrixView

SHIPPED = paths.checkpoints_dir() / "default"


def _text(widget) -> str:
    return str(widget.render())


def cosines(rows: torch.Tensor) -> torch.Tensor:
    unit = rows / rows.norm(dim=1, keepdim=True)
    return unit @ unit.T


@pytest.fixture
def snapshot(tmp_path):
    torch.manual_seed(0)
    model = MiniGPT(GPTConfig(vocab_size=27, block_size=16, d_model=16, n_heads=2, n_layers=2))
    for p in model.parameters():
        p.data += 0.3 * torch.randn_like(p)
    return save_checkpoint(tmp_path / "runs" / "r" / "snapshots" / "step-00000200", model,
                           Vocab(tuple(".abcdefghijklmnopqrstuvwxyz")))


@pytest.fixture
def broken(tmp_path):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "config.json").write_text("{not json")
    return folder


async def load(pilot, path, shown):
    """ctrl+l, then the shipped model (enter on the first row) or ``path``; wait for ``shown()``."""
    await pilot.press("ctrl+l")
    await pilot.pause()
    assert pilot.app.screen.rows[0][1] == SHIPPED  # the one picker, the shipped default first
    if path is None:
        await pilot.press("enter")
    else:
        pilot.app.screen.dismiss(path)
    await waiting.until(pilot, shown, 60, "the model's view")
    await pilot.pause()


async def test_positions_show_the_models_wpe_similarities(app, snapshot, broken):
    async with app.run_test(size=(80, 24)) as pilot:
        scr = navigation.open_screen(app, "explorer.positions")
        await pilot.pause()
        for path in (None, snapshot):
            wpe = load_file((path or SHIPPED) / WEIGHTS)["pos_emb.weight"].double()
            await load(pilot, path, lambda d=wpe.shape[1]: scr.model is not None and len(scr.model.table[0]) == d)
            view = scr.query_one("#pe-table", MatrixView)
            assert view.panel.name == "cos" and len(view.panel.values) == 16
            want = cosines(wpe)
            assert view.cell_text(3, 7) == fmt(want[3, 7].item(), view.decimals)
            assert "learned position table (wpe)" in _text(scr.query_one("#pe-title"))
            assert f"‖p0‖ = {wpe[0].norm():.3f}" in _text(scr.query_one("#pe-row"))
            assert all_problems(app) == []
        assert "r · step 200" in _text(scr.query_one("#pe-title"))
        for path, words in ((paths.checkpoints_dir() / "bigram", "bigram model"), (broken, "config.json")):
            await pilot.press("ctrl+l")
            app.screen.dismiss(path)
            await waiting.until(pilot, lambda w=words: w in _text(scr.query_one("#pe-error")), 60, words)
            assert "✗" in _text(scr.query_one("#pe-error")) and scr.model.label == "r · step 200"
        scr.query_one("#pe-shape").value = "6 4"  # typing a shape goes back to the sinusoids
        await pilot.pause()
        assert scr.model is None and scr.query_one("#pe-table", MatrixView).panel.name == "PE"


async def test_norms_show_the_models_gains(app, snapshot, broken):
    async with app.run_test(size=(80, 24)) as pilot:
        scr = navigation.open_screen(app, "explorer.norms")
        await pilot.pause()
        assert not scr.query_one("#n-model-table").display
        await load(pilot, snapshot, lambda: scr.model is not None)
        t = load_file(snapshot / WEIGHTS)
        table = scr.query_one("#n-model-table", MatrixView)
        assert table.display and table.panel.row_labels == ["1.ln1", "1.ln2", "2.ln1", "2.ln2", "ln_f"]
        for i, prefix in enumerate(("blocks.0.ln1", "blocks.0.ln2", "blocks.1.ln1", "blocks.1.ln2", "ln_f")):
            g = t[f"{prefix}.weight"].double()
            assert table.cell_text(i, 0) == fmt(g.mean().item(), table.decimals)
            assert table.cell_text(i, 2) == fmt(g.max().item(), table.decimals)
        assert "r · step 200" in _text(scr.query_one("#n-model"))
        assert all_problems(app) == []
        await pilot.press("ctrl+l")
        app.screen.dismiss(broken)
        await waiting.until(pilot, lambda: "✗" in _text(scr.query_one("#n-error")), 60, "the refusal")
        assert table.display  # the loaded model stays


async def test_tokens_show_the_models_characters_and_neighbours(app, snapshot):
    async with app.run_test(size=(80, 24)) as pilot:
        scr = navigation.open_screen(app, "explorer.tokens")
        await pilot.pause()
        scr.query_one("#tok-text").value = "ab!"
        await load(pilot, snapshot, lambda: scr.model is not None)
        text = _text(scr.query_one("#tok-model"))
        assert "ids 1 2 ?" in text and "not in its vocabulary: !" in text
        wte = load_file(snapshot / WEIGHTS)["tok_emb.weight"].double()
        sim = cosines(wte)
        sim.fill_diagonal_(-2)
        j = int(sim[1].argmax())
        assert f"a→{'.abcdefghijklmnopqrstuvwxyz'[j]} {sim[1, j].item():+.2f}" in text
        await pilot.press("ctrl+l")
        app.screen.dismiss(paths.checkpoints_dir() / "mlp")
        await waiting.until(pilot, lambda: "mlp model" in _text(scr.query_one("#tok-model")), 60, "the refusal")
        assert all_problems(app) == []


async def test_scaling_marks_the_models_measured_scores(app):
    from minigpt.teaching.model_views import load_explorable, scaling_view

    async with app.run_test(size=(80, 24)) as pilot:
        scr = navigation.open_screen(app, "explorer.scaling")
        await waiting.until(pilot, lambda: scr.demos, 60, "the random demo")
        await load(pilot, None, lambda: scr.model is not None)
        want = scaling_view(load_explorable(SHIPPED))
        text = _text(scr.query_one("#sc-model"))
        assert f"(d_k = {want.d_k})" in text and f"std {want.std_raw:.3f} → {want.std_scaled:.3f}" in text
        assert "d_k = 16" in _text(scr.query_one("#sc-table"))  # the random demo at the model's d_k
        assert all_problems(app) == []
