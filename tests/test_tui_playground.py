"""Pilot tests of the playground: controls, nudges, bad input, step mode, score, sweep, compare,
copy and save. Numbers read back from the widgets are compared with the library's."""

from __future__ import annotations

import pytest

from minigpt.playground.generation import Settings, load_for_playground, run_batch
from minigpt.playground.inspection import score_name
from tui.playground.playground import PlaygroundScreen


@pytest.fixture(scope="module")
def ckpt_root(playground_checkpoints):
    return playground_checkpoints["default"].parent


async def settle(pilot):
    for _ in range(3):
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def open_playground(app, pilot, ckpt_root):
    app.push_screen(PlaygroundScreen(checkpoints_dir=ckpt_root, runs_root=ckpt_root / "no-runs"))
    await settle(pilot)
    screen = app.screen
    assert isinstance(screen, PlaygroundScreen) and screen.batch is not None
    return screen


def names_in_table(screen) -> list[str]:
    table = screen.query_one("#pg-names")
    return [str(table.get_row_at(i)[1]).rstrip("…") for i in range(table.row_count)]


async def test_generate_nudge_and_bad_input(tmp_path, ckpt_root, make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_playground(app, pilot, ckpt_root)
        loaded = load_for_playground(ckpt_root / "default")
        expected = run_batch(loaded, Settings())
        assert names_in_table(screen) == [s.text.rstrip() or "(empty)" for s in expected.samples]
        summary = str(screen.query_one("#pg-summary").render())
        assert f"new {expected.summary.share_new:.0%}" in summary
        assert f"{expected.summary.mean_logprob_per_char:.3f}" in summary

        # each nudge key changes its control and regenerates at once
        for key, check in [("T", lambda s: s.temperature == pytest.approx(1.1)),
                           ("t", lambda s: s.temperature == pytest.approx(1.0)),
                           ("K", lambda s: s.top_k == 2), ("p", lambda s: s.top_p == pytest.approx(0.95)),
                           ("P", lambda s: s.top_p is None), ("k", lambda s: s.top_k is None),
                           ("n", lambda s: s.n == 20), ("S", lambda s: s.seed == 43),
                           ("l", lambda s: s.max_len == loaded.model.config.block_size - 2)]:
            await pilot.press(key)
            await settle(pilot)
            assert check(screen.settings), key
            again = run_batch(loaded, screen.settings)
            assert names_in_table(screen) == [s.text or "(empty)" for s in again.samples], key
        assert screen.query_one("#pg-seed").value == "43"

        # top-k = 1 gives the greedy name, typed into the field
        screen.query_one("#pg-top_k").value = "1"
        screen.query_one("#pg-max_len").value = "off"
        await pilot.click("#pg-top_k")
        await pilot.press("enter")
        await settle(pilot)
        from minigpt.sampling import greedy_continuation
        assert set(names_in_table(screen)) == {greedy_continuation(loaded.model, loaded.vocab, "")}

        # a prefix with a character outside the vocabulary: a clear message, names kept
        before = names_in_table(screen)
        await pilot.press("f")
        await pilot.press("a", "7", "enter")
        await settle(pilot)
        message = str(screen.query_one("#pg-message").render())
        assert "'7' not in the model's vocabulary" in message
        assert names_in_table(screen) == before
        assert screen.query_one("#pg-prefix").value == "a7"  # nothing typed is lost

        # a bad number names its field
        screen.query_one("#pg-prefix").value = "em"
        screen.query_one("#pg-temperature").value = "hot"
        await pilot.press("enter")
        await settle(pilot)
        assert "temperature" in str(screen.query_one("#pg-message").render())
        assert screen.query_one("#pg-temperature").has_class("-invalid")
        screen.query_one("#pg-temperature").value = "0.8"
        await pilot.press("enter")
        await settle(pilot)
        assert screen.settings.prefix == "em" and screen.settings.temperature == 0.8
        assert all(n.startswith("em") for n in names_in_table(screen))

        # switching checkpoint: m opens the list of models, down and enter choose the next one
        assert screen.focused is screen.query_one("#pg-names")  # enter applied and left the field
        await pilot.press("m")
        await pilot.pause()
        model = screen.query_one("#pg-model")
        assert model.expanded and screen.loaded.kind != "bigram"  # opened, nothing switched yet
        await pilot.press("down", "enter")
        await settle(pilot)
        assert screen.loaded.kind == "bigram"


async def test_a_batch_overtaken_by_a_newer_request_is_dropped(tmp_path, ckpt_root, make_app, monkeypatch):
    """Two quick nudges: the first batch returns after the second is on screen, and is dropped
    (tui.workers.Result), so the table keeps the names of the settings the fields show."""
    import threading

    import tui.playground.playground as pg
    import tui.workers as workers
    from tests.helpers.waiting import until

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_playground(app, pilot, ckpt_root)
        loaded = load_for_playground(ckpt_root / "default")
        names = {seed: [s.text or "(empty)" for s in run_batch(loaded, Settings(seed=seed)).samples]
                 for seed in (43, 44)}
        assert names[43] != names[44]
        release, asked, posted = threading.Event(), [], []

        def first_held_back(model, settings):
            asked.append(settings.seed)
            if settings.seed == 43:
                release.wait(30)
            return run_batch(model, settings)

        def recorded(node, result):  # the worker posts its result, then the test knows it was sent
            sent = real_post(node, result)
            posted.append(result)
            return sent

        real_post = workers.post_result
        monkeypatch.setattr(pg, "run_batch", first_held_back)
        monkeypatch.setattr(workers, "post_result", recorded)
        await pilot.press("S")  # seed 43: held back
        await until(pilot, lambda: asked == [43], 10, "the first request to start")
        await pilot.press("S")  # seed 44, asked before the first returns
        await until(pilot, lambda: names_in_table(screen) == names[44], 20, "the second batch on screen")
        release.set()
        await until(pilot, lambda: any(getattr(r, "settings", None) and r.settings.seed == 43 for r in posted), 20,
                    "the first batch to be posted")
        await pilot.pause()
        # A Result the test posts queues behind the first batch: once it shows, that batch was handled.
        screen.post_message(PlaygroundScreen.Sampled(error="after the first batch"))
        await until(pilot, lambda: "after the first batch" in str(screen.query_one("#pg-message").render()), 10,
                    "the test's own Result")
        assert names_in_table(screen) == names[44] and screen.settings.seed == 44


async def test_step_mode(tmp_path, ckpt_root, make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_playground(app, pilot, ckpt_root)
        await pilot.press("i")
        await pilot.pause()
        step = app.screen
        from tui.playground.playground_step import StepScreen
        assert isinstance(step, StepScreen)
        dist = step.stepper.distribution
        table = str(step.query_one("#step-table").render())
        _best, p_best, _ = dist.top(1)[0]
        assert f"{p_best:.3f}" in table and "p final" in table and "÷T" in table
        await pilot.press("e")  # the learner picks 'e'
        assert step.stepper.text == "e"
        assert f"{dist.probs[screen.loaded.vocab.stoi['e']].item():.3f}" in str(step.query_one("#step-status").render())
        await pilot.press("space")
        assert len(step.stepper.history) == 2
        await pilot.press("backspace")
        assert step.stepper.text == "e"
        await pilot.press("7")
        assert "not in the model's vocabulary" in str(step.query_one("#step-status").render())
        await pilot.press("plus")
        assert step.stepper.settings.temperature == pytest.approx(1.1)
        await pilot.press("full_stop")
        assert step.stepper.finished
        assert "Finished" in str(step.query_one("#step-table").render())
        await pilot.press("escape")
        assert app.screen is screen


async def test_a_text_model_has_no_step_mode_or_scoring_and_says_why(tmp_path, make_app):
    """A text model's '.' is an ordinary character and it has no start token: stepping or scoring
    it as a name would show wrong numbers, so both keys leave the footer, help and palette (the model line says what a text model does)."""
    import torch

    from minigpt.checkpoint import save_checkpoint
    from minigpt.models.config import GPTConfig
    from minigpt.models.gpt import MiniGPT
    from minigpt.playground.inspection import Stepper
    from minigpt.sampling import SamplingError
    from minigpt.text_data import text_vocab

    vocab = text_vocab("the cat sat. ")
    torch.manual_seed(0)
    model = MiniGPT(GPTConfig(vocab_size=vocab.size, block_size=8, d_model=8, n_heads=2, n_layers=1)).eval()
    save_checkpoint(tmp_path / "bundled" / "default", model, vocab,
                    train_config={"data_format": "text", "seed": 1}, metrics={"val_loss": 2.0})
    loaded = load_for_playground(tmp_path / "bundled" / "default")
    with pytest.raises(SamplingError, match="text model"):
        Stepper(loaded, Settings())
    with pytest.raises(SamplingError, match="text model"):
        score_name(loaded, "cat")
    # Its text had no line break, so with no prefix it continues from a space; the sweep's
    # first distribution is the prompt's own, with no start token in front.
    batch = run_batch(loaded, Settings(n=2, max_len=5, seed=3))
    assert [len(s.text) for s in batch.samples] == [5, 5]
    from minigpt.playground.generation import temperature_sweep
    from minigpt.sampling import next_distribution

    column = temperature_sweep(loaded, Settings(n=2, prefix="sat.", max_len=8), temperatures=(1.0,))[0]
    direct = next_distribution(model, vocab, "sat.", start_token=False)
    assert column.entropy == pytest.approx(direct.entropy)
    with torch.no_grad():
        logits, _ = model(torch.tensor([vocab.encode("sat.")]))
    assert torch.allclose(direct.probs, torch.softmax(logits[0, -1], -1), atol=1e-6)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_playground(app, pilot, tmp_path / "bundled")
        assert screen.loaded.is_text
        assert screen.check_action("step", ()) is False and screen.check_action("score", ()) is False
        assert screen.check_action("regenerate", ()) is True
        screen.action_step()  # reached all the same, it explains
        await pilot.pause()
        assert app.screen is screen
        assert any("text model" in n.message for n in app._notifications)


async def test_score_sweep_compare_copy_save(tmp_path, ckpt_root, isolated_data_dir, make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_playground(app, pilot, ckpt_root)
        await pilot.press("o")
        await pilot.pause()
        score = app.screen
        score.query_one("#score-input").value = "ava"
        await pilot.press("enter")
        await pilot.pause()
        expected = score_name(screen.loaded, "ava")
        assert f"{expected.total_logprob:.3f}" in str(score.query_one("#score-total").render())
        assert score.query_one("#score-table").row_count == 4
        score.query_one("#score-input").value = "av3"
        await pilot.press("enter")
        await pilot.pause()
        assert "'3' not in the model's vocabulary" in str(score.query_one("#score-total").render())
        assert score.query_one("#score-table").row_count == 0  # no rows left over from "ava"
        score.query_one("#score-input").value = "Ava"  # a capital: the model's names are lower case
        await pilot.press("enter")
        await pilot.pause()
        assert score.query_one("#score-table").row_count == 4
        assert f"{expected.total_logprob:.3f}" in str(score.query_one("#score-total").render())
        score.query_one("#score-input").value = "av3"
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("escape")  # nothing left to look at: straight back
        assert app.screen is screen

        await pilot.press("w")
        await settle(pilot)
        sweep = app.screen
        assert len(sweep.columns) == 5
        col = str(sweep.query_one("#sweep-1_5").render())
        assert f"H {sweep.columns[-1].entropy:.2f}" in col
        await pilot.press("escape")

        await pilot.press("c")
        await settle(pilot)
        compare = app.screen
        assert [c.kind for c in compare.columns] == ["bigram", "mlp", "gpt"]
        gpt_col = str(compare.query_one("#compare-gpt").render())
        assert f"{screen.loaded.loss[0]:.3f}" in gpt_col
        await pilot.press("escape")

        await pilot.press("y")
        await pilot.press("e")
        await pilot.pause()
        saved = list((isolated_data_dir / "playground").glob("names-*.txt"))
        assert len(saved) == 1
        assert [l.split("\t")[0] for l in saved[0].read_text().splitlines()[2:]] == \
            [s.text for s in screen.batch.samples]


async def test_area_opens_from_home(tmp_path, make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("p")
        await settle(pilot)
        assert isinstance(app.screen, PlaygroundScreen)
        if not app.screen.choices:  # no shipped checkpoint yet: a clear message, no crash
            assert "No checkpoint found" in str(app.screen.query_one("#pg-message").render())


async def test_cli_and_screen_give_the_same_names(tmp_path, ckpt_root, make_app):
    cli = pytest.importorskip("minigpt.cli")
    import json

    from click.testing import CliRunner

    result = CliRunner().invoke(cli.main, ["sample", "--checkpoint", str(ckpt_root / "default"), "-n", "10",
                                           "--temperature", "0.8", "--top-k", "5", "--seed", "5", "--json"])
    assert result.exit_code == 0, result.output
    from_cli = json.loads(result.stdout)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_playground(app, pilot, ckpt_root)
        for field, value in [("n", "10"), ("temperature", "0.8"), ("top_k", "5"), ("seed", "5")]:
            screen.query_one(f"#pg-{field}").value = value
        screen.query_one("#pg-seed").focus()
        await pilot.press("enter")
        await settle(pilot)
        assert names_in_table(screen) == [r["name"] or "(empty)" for r in from_cli]
        assert [s.membership for s in screen.batch.samples] == [r["membership"] for r in from_cli]


async def test_palette_lists_the_screen_actions(tmp_path, ckpt_root, make_app):
    from tui.common.screen_commands import screen_commands

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_playground(app, pilot, ckpt_root)
        commands = screen_commands(screen)
        titles = [text for text, _, _ in commands]
        assert "Playground: Step" in titles and "Playground: Temperature +0.1" in titles
        callback = dict((t, cb) for t, _, cb in commands)["Playground: Temperature +0.1"]
        await callback()
        await settle(pilot)
        assert screen.settings.temperature == pytest.approx(1.1)
