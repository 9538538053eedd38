"""The attention stepper and the maths explorers, driven as a learner would at 80×24."""

from __future__ import annotations

import pytest
import torch

from minigpt.models.config import GPTConfig
from minigpt.teaching.explorers import real_param_count
from minigpt.teaching.params import gpt_total
from minigpt.teaching.stepper import BUG_ORDER, stage_panels
from tests.helpers.waiting import until
from tui.common.matrix_view import MatrixView


def _text(widget) -> str:
    return str(widget.render())


def _row(view: MatrixView, i: int) -> list[str]:
    return [view.cell_text(i, j) for j in range(len(view.panel.values[0]))]


async def _open_stepper(pilot):
    await pilot.press("a")
    await pilot.pause()
    return pilot.app.screen


async def _go(pilot, screen, stage: str):
    while screen.stage != stage:
        await pilot.press("n" if screen.stages.index(stage) > screen.stage_index else "p")
    await pilot.pause()


async def test_course_example_numbers_on_the_right_stages(app):
    async with app.run_test(size=(80, 24)) as pilot:
        scr = await _open_stepper(pilot)
        cur = scr.query_one("#att-current", MatrixView)
        # Every stage's cells equal minigpt.teaching.attention's numbers.
        for stage in scr.stages:
            await _go(pilot, scr, stage)
            want = stage_panels(scr.state, scr.state.compute(), stage)[0].values
            assert cur.panel.values == want, stage
        await _go(pilot, scr, "weights")
        assert _row(cur, 0) == ["0.154", "0.313", "0.313", "0.220"]
        assert _row(cur, 2) == ["0.199", "0.199", "0.403", "0.199"]
        assert _row(cur, 3) == ["0.226", "0.226", "0.322", "0.226"]
        assert "course prints row 3" in _text(scr.query_one("#att-explain"))
        assert cur.region.right <= 80 and cur.region.bottom <= 24  # visible at 80×24
        await pilot.press("3")  # no √d_k: the course's unscaled numbers
        await pilot.pause()
        assert _row(cur, 0) == ["0.124", "0.336", "0.336", "0.204"]
        await _go(pilot, scr, "output")
        assert _row(cur, 0) == ["0.562", "1.336"]
        await pilot.press("3", "p", "p", "p", "p")
        await pilot.pause()
        assert scr.stage == "scores"
        await pilot.press("down", "down", "right")
        assert "S[2,1] = q₂·k₁ = 1.0×1.0 + 1.0×0.0 = 1.00" in _text(scr.query_one("#att-explain"))


async def test_mask_and_each_bug_turn_one_check_red(app):
    async with app.run_test(size=(80, 24)) as pilot:
        scr = await _open_stepper(pilot)
        await pilot.press("m")
        await _go(pilot, scr, "weights")
        cur = scr.query_one("#att-current", MatrixView)
        assert _row(cur, 0) == ["1.000", "0.000", "0.000", "0.000"]
        checks = _text(scr.query_one("#att-checks"))
        assert "✗" not in checks and checks.count("✓") == 7
        for k in range(4):  # k_not_transposed cannot multiply a 4×2 by a 4×2: tested below
            await pilot.press(str(k + 1))
            await pilot.pause()
            assert _text(scr.query_one("#att-checks")).count("✗") == 1, BUG_ORDER[k]
            await pilot.press(str(k + 1))
        await pilot.press("5")
        await pilot.pause()
        assert _text(scr.query_one("#att-checks")).count("✗") == 1
        assert "K is 4×2" in _text(cur)


async def test_editing_x_recomputes_downstream_and_bad_input_is_explained(app):
    async with app.run_test(size=(80, 24)) as pilot:
        scr = await _open_stepper(pilot)
        await pilot.press("e")
        box = scr.query_one("#att-input")
        box.value = "abc"
        await pilot.press("enter")
        await pilot.pause()
        assert "not a number" in _text(scr.query_one("#att-message")) and box.display
        box.value = "3"
        await pilot.press("enter")
        await pilot.pause()
        assert scr.state.X[0][0] == 3.0 and not box.display
        await _go(pilot, scr, "weights")
        cur = scr.query_one("#att-current", MatrixView)
        from minigpt.teaching.attention import self_attention

        want = self_attention(scr.state.X, scr.state.W_Q, scr.state.W_K, scr.state.W_V).weights
        assert torch.allclose(torch.tensor(cur.panel.values, dtype=torch.float64), want)
        assert _row(cur, 0) != ["0.154", "0.313", "0.313", "0.220"]
        await pilot.press("e")  # a computed stage cannot be edited: a message says where to go
        await pilot.pause()
        assert "computed" in _text(scr.query_one("#att-message"))


async def test_predict_then_reveal_export_and_presets(app, isolated_data_dir):
    async with app.run_test(size=(80, 24)) as pilot:
        scr = await _open_stepper(pilot)
        await pilot.press("k", "n")
        await pilot.pause()
        cur = scr.query_one("#att-current", MatrixView)
        assert cur.hidden and cur.cell_text(0, 0) == "?"
        scr.query_one("#att-input").value = "1"  # Q[0,0] = 1
        await pilot.press("enter")
        await pilot.pause()
        assert not cur.hidden and "✓ Right" in _text(scr.query_one("#att-message"))
        await pilot.press("k", "x")
        await pilot.pause()
        md = isolated_data_dir / "exports" / "attention-qkv-Q.md"
        assert md.exists() and "| the | 1.000 | 0.000 |" in md.read_text()
        await pilot.press("right_square_bracket")  # five tokens, d = 4, two heads
        await pilot.pause()
        assert scr.state.n_heads == 2 and scr.stages[-1] == "wo"
        await pilot.press("s")
        scr.query_one("#att-input").value = "6 4 3"
        await pilot.press("enter")
        await pilot.pause()
        assert "heads must divide d" in _text(scr.query_one("#att-message"))
        scr.query_one("#att-input").value = "6 6 3"
        await pilot.press("enter")
        await pilot.pause()
        assert len(scr.state.tokens) == 6 and scr.state.n_heads == 3 and "seed" in _text(scr.query_one("#att-status"))


def test_parameter_count_matches_the_real_model_for_a_grid_of_shapes():
    for d, L, h, V, T, tie, bias in [(16, 1, 2, 27, 8, False, True), (64, 4, 4, 27, 16, True, True),
                                     (48, 3, 6, 100, 32, False, False), (32, 2, 1, 65, 64, True, False)]:
        cfg = GPTConfig(vocab_size=V, block_size=T, d_model=d, n_heads=h, n_layers=L, tie_weights=tie, bias=bias)
        assert gpt_total(cfg) == real_param_count(cfg)


async def test_explorers_show_library_numbers(app, tmp_path):
    from tui.navigation import open_explorer

    async with app.run_test(size=(80, 24)) as pilot:
        await _open_stepper(pilot)
        await pilot.press("o", "4")  # parameter counter from the stepper's explorer menu
        await pilot.pause()
        scr = app.screen
        await until(pilot, lambda: "equal" in _text(scr.query_one("#p-total")), 60, '"equal" in _text(scr.query_one("#p-total"))')
        total = gpt_total(GPTConfig())
        assert f"{total:,}" in _text(scr.query_one("#p-total")) and "✓ equal" in _text(scr.query_one("#p-total"))
        scr.query_one("#p-n_heads").value = "5"
        await pilot.pause()
        assert "divisible" in _text(scr.query_one("#p-error"))
        await pilot.press("escape")
        open_explorer(app, "norms")
        await pilot.pause()
        steps = _text(app.screen.query_one("#n-steps"))
        assert "μ = (2.0 + 4.0 + 6.0 + 8.0) / 4 = 5.0" in steps and "-1.342" in steps
        app.screen.query_one("#n-rows").value = "1 2"
        await pilot.pause()
        assert "has 2 numbers" in _text(app.screen.query_one("#n-error"))
        await pilot.press("escape")
        open_explorer(app, "positions")
        await pilot.pause()
        assert "✓ equal" in _text(app.screen.query_one("#pe-rope"))
        assert app.screen.query_one("#pe-table", MatrixView).value(1, 0) == pytest.approx(0.8414709848)
        await pilot.press("escape")
        open_explorer(app, "scaling")
        await until(pilot, lambda: app.screen.query("#sc-table") and "d_k = 64" in _text(app.screen.query_one("#sc-table")), 60,
                    "the scaling table at d_k = 64")
        from minigpt.teaching.attention import scaling_demo

        d64 = scaling_demo(64)
        assert f"{d64.max_weight_raw:.3f}" in _text(app.screen.query_one("#sc-table"))


async def test_trained_attention_grid_and_focused_head(app, tmp_path):
    from minigpt.checkpoint import save_checkpoint
    from minigpt.data import Vocab
    from minigpt.models.gpt import MiniGPT
    from tui.explorers.attention_grid import AttentionGrid
    from tui.explorers.explorer_trained import TrainedAttentionScreen

    torch.manual_seed(0)
    model = MiniGPT(GPTConfig(vocab_size=27, block_size=16, d_model=16, n_heads=2, n_layers=2))
    vocab = Vocab(tuple(".abcdefghijklmnopqrstuvwxyz"))
    path = save_checkpoint(tmp_path / "ckpt", model, vocab)
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(TrainedAttentionScreen(checkpoints=[("tiny", path)], name="ana"))
        scr = app.screen
        await until(pilot, lambda: scr.maps is not None, 60, 'scr.maps is not None')
        want = model.attention_maps(torch.tensor([[0, 1, 14, 1]]))
        assert torch.allclose(torch.tensor(scr.maps, dtype=torch.float64), want.double(), atol=1e-6)
        grid = scr.query_one(AttentionGrid)
        grid.focus()
        await pilot.press("down", "right", "enter")
        await pilot.pause()
        view = scr.query_one("#tr-focus", MatrixView)
        assert view.panel.name == "layer 1 head 1" and view.panel.row_labels == [".", "a", "n", "a"]
        assert view.cell_text(3, 1) == f"{want[1, 1, 3, 1].item():.3f}"
        scr.query_one("#tr-name").value = "an7"
        await pilot.pause()
        assert "not in the model's vocabulary" in _text(scr.query_one("#tr-status"))
        await pilot.press("[")  # a checkpoint outside a run has no snapshots: a warning, nothing moves
        assert scr.scrub_step is None
        await pilot.press("escape", "escape")  # the focused head, then the view (opened with no callback)
        await pilot.pause()
        assert app.screen is not scr


async def test_trained_heads_follow_a_live_run(app, tmp_path):
    """The trained-heads view reloads a run's checkpoint when the run saves a newer one."""
    from minigpt.checkpoint import save_checkpoint
    from minigpt.data import Vocab
    from minigpt.models.gpt import MiniGPT
    from tui.explorers.explorer_trained import TrainedAttentionScreen

    vocab = Vocab(tuple(".abcdefghijklmnopqrstuvwxyz"))
    config = GPTConfig(vocab_size=27, block_size=16, d_model=16, n_heads=2, n_layers=2)
    torch.manual_seed(0)
    path = save_checkpoint(tmp_path / "checkpoint", MiniGPT(config), vocab)
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(TrainedAttentionScreen(checkpoints=[("live run", path)], name="ana"))
        scr = app.screen
        await until(pilot, lambda: scr.maps is not None, 60, 'scr.maps is not None')
        first = scr.maps
        torch.manual_seed(1)
        newer = MiniGPT(config)
        save_checkpoint(tmp_path / "checkpoint", newer, vocab)  # what the trainer does at a better eval
        want = newer.attention_maps(torch.tensor([[0, 1, 14, 1]]))
        await until(pilot, lambda: scr.reloads >= 2 and scr.maps is not first and scr.checkpoint is not None
                    and torch.allclose(torch.tensor(scr.maps, dtype=torch.float64), want.double(), atol=1e-6),
                    10, "the newer checkpoint's maps")
        assert scr.reloads >= 2  # (a save may touch the folder twice: one more reload, same model)
        assert torch.allclose(torch.tensor(scr.maps, dtype=torch.float64), want.double(), atol=1e-6)


async def _wait_message(pilot, screen, words: str) -> str:
    def shown() -> str:
        return _text(screen.query_one("#att-message"))

    return await until(pilot, lambda: words in shown() and shown(), 15, f"{words!r} in the message",
                       describe=lambda: f"it reads {shown()!r}")


async def test_the_stepper_steps_through_a_trained_models_layer(app, tmp_path):
    """c lists the shipped MiniGPT first; its layer 2 on 'ana' is what that model computes; a
    damaged checkpoint and a model the stepper cannot show get a message and change nothing."""
    from minigpt import paths
    from minigpt.checkpoint import load_checkpoint, save_checkpoint
    from minigpt.data import Vocab
    from minigpt.models.gpt import MiniGPT

    async with app.run_test(size=(80, 24)) as pilot:
        scr = await _open_stepper(pilot)
        await pilot.press("c")
        picker = app.screen
        assert picker.rows[0][1] == paths.checkpoints_dir() / "default"  # the shipped default first
        await pilot.press("enter")  # the highlighted first row
        assert scr.input_mode == "model"
        scr.query_one("#att-input").value = "ana 2"
        await pilot.press("enter")
        await _wait_message(pilot, scr, "that model's own numbers")
        shipped = load_checkpoint(paths.checkpoints_dir() / "default")
        want = shipped.model.attention_maps(torch.tensor([[0, 1, 14, 1]]))[1]
        assert scr.state.tokens == [".", "a", "n", "a"] and scr.state.name == "ana · layer 2/4"
        for head in range(4):
            assert torch.allclose(scr.mh.heads[head].weights, want[head].double(), atol=1e-5)
        await _go(pilot, scr, "qkv")  # 64 dimensions and the bias's 1: the products cut short
        assert "Q[0,0] = x₀·W_Q[:,0] = " in _text(scr.query_one("#att-explain"))
        assert "… 60 more …" in _text(scr.query_one("#att-explain"))
        await _go(pilot, scr, "weights")
        cur = scr.query_one("#att-current", MatrixView)
        assert cur.cell_text(3, 1) == f"{want[0, 3, 1].item():.3f}"
        from tests.helpers.screen_checks import all_problems
        await until(pilot, lambda: all_problems(app) == [], 15, "a layout with no problems",
                    describe=lambda: str(all_problems(app)))

        broken = tmp_path / "broken"
        broken.mkdir()
        (broken / "config.json").write_text("{not json")
        torch.manual_seed(0)
        rope = save_checkpoint(tmp_path / "rope", MiniGPT(GPTConfig(vocab_size=27, block_size=16, d_model=8,
                                                                    n_heads=2, n_layers=1, pos_encoding="rope")),
                               Vocab(tuple(".abcdefghijklmnopqrstuvwxyz")))
        for path, words in ((broken, "config.json"), (rope, "RoPE")):
            await pilot.press("c")
            app.screen.dismiss(path)
            await pilot.pause()
            await pilot.press("enter")  # "ana 2" again
            text = await _wait_message(pilot, scr, words)
            assert "✗" in text and scr.state.name == "ana · layer 2/4"  # the loaded layer stays


async def test_the_parameter_counter_loads_a_checkpoints_shape(app, tmp_path):
    """ctrl+l fills the counter from a checkpoint: the shipped model's 204,544, equal to the numbers
    its weights file holds; a snapshot of a grouped-query model keeps its narrower K and V."""
    from minigpt.checkpoint import save_checkpoint
    from minigpt.data import Vocab
    from minigpt.models.gpt import MiniGPT
    from tui import navigation

    torch.manual_seed(0)
    gqa = MiniGPT(GPTConfig(vocab_size=27, block_size=16, d_model=16, n_heads=4, n_kv_heads=2, n_layers=2,
                            norm="rmsnorm", pos_encoding="sinusoidal"))
    path = save_checkpoint(tmp_path / "runs" / "r" / "snapshots" / "step-00000200", gqa,
                           Vocab(tuple(".abcdefghijklmnopqrstuvwxyz")))
    async with app.run_test(size=(80, 24)) as pilot:
        scr = navigation.open_screen(app, "explorer.params")
        await pilot.pause()
        for pick, total in ((None, 204_544), (path, sum(p.numel() for p in gqa.parameters()))):
            await pilot.press("ctrl+l")
            if pick is None:
                await pilot.press("enter")  # the shipped default, listed first
            else:
                app.screen.dismiss(pick)
            # The rendered text has no markup: "real model {total}" is the count of the real model.
            await until(pilot, lambda total=total: (
                f"holds {total:,} learned numbers  ✓ equal" in (text := _text(scr.query_one("#p-total")))
                and f"real model {total:,}" in text), 30, f"the counter to show the file's {total:,}",
                describe=lambda: f"{_text(scr.query_one('#p-total'))!r} {_text(scr.query_one('#p-error'))!r} "
                                 f"{scr.loaded}")
        assert scr.config().n_kv_heads == 2 and scr.query_one("#p-d_model").value == "16"
        scr.query_one("#p-n_layers").value = "3"  # a shape of its own: the file's line goes
        await pilot.pause()
        assert "holds" not in _text(scr.query_one("#p-total"))
        from tests.helpers.screen_checks import all_problems
        assert all_problems(app) == []


async def test_the_step_between_the_first_two_stages_lays_nothing_out(app):
    """The first stage keeps the previous stage's slot, as big as what the second shows there, so
    `n` into the second stage (the step bench_latency.py times) and `p` back fill and empty it in
    place: no layout, nothing moves, and the slot says what it is for meanwhile."""
    async with app.run_test(size=(80, 24)) as pilot:
        scr = await _open_stepper(pilot)
        await pilot.pause()
        prev, cur = scr.query_one("#att-prev", MatrixView), scr.query_one("#att-current", MatrixView)
        assert prev.placeholder and "previous" in _text(prev)
        regions = {w: w.region for w in scr.walk_children()}
        layouts = []
        refresh_layout = scr._refresh_layout
        scr._refresh_layout = lambda *args, **kwargs: layouts.append(scr.stage) or refresh_layout(*args, **kwargs)
        for key, stage in (("n", "qkv"), ("p", "input")) * 2:
            await pilot.press(key)
            await pilot.pause()
            await pilot.pause()
            assert scr.stage == stage and {w: w.region for w in scr.walk_children()} == regions
        assert layouts == [], layouts
        await pilot.press("n")
        await pilot.pause()
        assert not prev.placeholder and prev.panel.name == "X" and cur.panel.name == "Q"
        assert _row(prev, 0) == [f"{v:.3f}" for v in scr.state.X[0]]


async def test_the_next_stage_updates_in_place_with_no_layout_it_does_not_need(app):
    """`n` mounts nothing and lays the screen out only where something changes size: a stage of
    the same shape whose lines keep their height is a repaint (masked: no layout, one before), and a
    stage that restacks the matrices fits them in the same layout as the new panels (scaled: two
    layouts instead of four). A layout reflows and redraws the whole screen, most of a stage's cost."""
    async with app.run_test(size=(80, 24)) as pilot:
        scr = await _open_stepper(pilot)
        await pilot.pause()
        widgets = set(scr.walk_children())
        layouts = []
        refresh_layout = scr._refresh_layout

        def counted(*args, **kwargs):
            layouts.append(scr.stage)
            return refresh_layout(*args, **kwargs)

        scr._refresh_layout = counted
        for _ in scr.stages[1:]:
            await pilot.press("n")
            await pilot.pause()
            await pilot.pause()
        assert set(scr.walk_children()) == widgets and scr.stage == "output"
        assert layouts.count("masked") == 0 and layouts.count("scaled") <= 2, layouts
