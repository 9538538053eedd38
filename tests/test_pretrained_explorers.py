"""The trained-heads grid, the positions explorer and the tokens explorer on a GPT-2 folder (the
kind ``minigpt hf fetch`` keeps), at 80×24: each lists the folder in its model picker, and what it
shows equals what the library computes on the loaded weights (BPE pieces printable, GPT-2's long
position table sampled, nearest tokens found one typed piece at a time)."""

from __future__ import annotations

import shutil

import pytest
import torch
from safetensors.torch import load_file, save_file

from minigpt import paths
from minigpt.pretrained.gpt2 import load_gpt2
from minigpt.teaching.explorers import SHOWN_SENTENCE_TOKENS
from minigpt.teaching.induction import pretrained_head_scores
from minigpt.teaching.model_views import SHOWN_POSITIONS, nearest_tokens
from minigpt.teaching.stepper import fmt
from minigpt.text import printable
from tests.helpers import waiting
from tests.helpers.gpt2_folders import write_random_gpt2
from tests.helpers.screen_checks import all_problems
from tui import navigation
from tui.common.matrix_view import MatrixView

N_POSITIONS = 100  # more than the explorer shows: the table is sampled, as GPT-2's 1,024 are


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return write_random_gpt2(tmp_path_factory.mktemp("gpt2") / "tiny-gpt2", n_positions=N_POSITIONS)


@pytest.fixture(scope="module")
def loaded(source):
    return load_gpt2(source)


@pytest.fixture
def fetched(source):
    """The folder where ``minigpt hf fetch`` puts it, in this test's data folder."""
    return shutil.copytree(source, paths.user_data_dir() / "models" / "tiny-gpt2")


def _text(widget) -> str:
    return str(widget.render())


async def test_the_trained_heads_grid_reads_a_sentence_and_scores_every_head(app, fetched, loaded):
    from tui.explorers.explorer_trained import SENTENCE, TrainedAttentionScreen, available_checkpoints

    rows = [(label, path) for label, path in available_checkpoints() if path == fetched]
    assert rows and "pretrained" in rows[0][0]
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(TrainedAttentionScreen(checkpoints=rows))
        scr = app.screen
        await waiting.until(pilot, lambda: scr.maps is not None, 60, "the GPT-2's maps")
        ids = loaded.tokenizer.encode(SENTENCE)[:SHOWN_SENTENCE_TOKENS]
        assert scr.labels == [loaded.tokenizer.piece(i) for i in ids] and "␣cat" in scr.labels
        want = loaded.model.attention_maps(torch.tensor([ids]))
        torch.testing.assert_close(torch.tensor(scr.maps), want, rtol=0, atol=1e-6)
        scores = pretrained_head_scores(loaded)
        layer, head, best = scores.best("induction")
        assert f"best induction: layer {layer} head {head} ({best:.2f})" in _text(scr.query_one("#tr-scores"))
        assert str(scr.query_one("#tr-name-label").render()) == "text"
        scr.focus_head(1, 2)
        view = scr.query_one("#tr-focus", MatrixView)
        assert view.panel.name == (f"layer 1 head 2 · previous-token {float(scores.previous[1, 2]):.2f},"
                                   f" induction {float(scores.induction[1, 2]):.2f}")
        await pilot.pause()
        assert all_problems(app) == []
        scr.query_one("#tr-name").value = "   "
        await pilot.pause()
        assert "type a sentence" in _text(scr.query_one("#tr-status"))


async def test_the_positions_explorer_samples_a_long_learned_table(app, fetched):
    async with app.run_test(size=(80, 24)) as pilot:
        scr = navigation.open_screen(app, "explorer.positions")
        await pilot.pause()
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert any(path == fetched and "pretrained" in label for label, path in app.screen.rows)
        app.screen.dismiss(fetched)
        await waiting.until(pilot, lambda: scr.model is not None, 60, "the GPT-2's positions")
        await pilot.pause()
        view = scr.query_one("#pe-table", MatrixView)
        shown = scr.model.positions
        assert len(shown) == SHOWN_POSITIONS and shown[0] == 0 and shown[-1] == N_POSITIONS - 1
        assert view.panel.row_labels == [f"p{p}" for p in shown]
        wpe = load_file(fetched / "model.safetensors")["wpe.weight"].double()
        unit = wpe / wpe.norm(dim=1, keepdim=True)
        assert view.cell_text(3, 7) == fmt(float(unit[shown[3]] @ unit[shown[7]]), view.decimals)
        title = _text(scr.query_one("#pe-title"))
        assert f"{N_POSITIONS} positions" in title and f"shown: {SHOWN_POSITIONS} of them" in title
        assert f"position 0[/b]: ‖p0‖ = {wpe[0].norm():.3f}" in str(scr.query_one("#pe-row").content)
        assert all_problems(app) == []


async def test_the_tokens_explorer_lists_each_pieces_nearest_tokens(app, fetched, loaded):
    text = " the cat\x00sat"
    async with app.run_test(size=(80, 24)) as pilot:
        scr = navigation.open_screen(app, "explorer.tokens")
        await pilot.pause()
        scr.query_one("#tok-text").value = text
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert any(path == fetched for _, path in app.screen.rows)
        app.screen.dismiss(fetched)
        await waiting.until(pilot, lambda: "nearest tokens" in _text(scr.query_one("#tok-model")), 60,
                            "the GPT-2's neighbours")
        shown = _text(scr.query_one("#tok-model"))
        ids = loaded.tokenizer.encode(text)
        assert "ids " + " ".join(map(str, ids)) in shown and "\x00" not in shown
        for piece, near in nearest_tokens(loaded, text, k=3):
            assert printable(f"{piece} → " + ", ".join(f"{n} {v:+.2f}" for n, v in near)) in shown
        await pilot.pause()
        assert all_problems(app) == []


async def test_picking_a_model_hands_the_arrows_back_to_the_heads(app, fetched):
    """Found on the browser walk: after m picked a model the list kept the focus, so the arrows
    meant for the heads picked another model; and a character model got the GPT-2's sentence."""
    from textual.widgets import Select

    from tui.explorers.attention_grid import AttentionGrid
    from tui.explorers.explorer_trained import SENTENCE, TrainedAttentionScreen, available_checkpoints

    rows = [row for row in available_checkpoints() if row[1] in (fetched, paths.checkpoints_dir() / "default")]
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(TrainedAttentionScreen(checkpoints=rows))
        scr = app.screen
        await waiting.until(pilot, lambda: scr.labels[:1] == ["."], 60, "the shipped model's heads on emma")
        for path, text in ((fetched, SENTENCE), (rows[0][1], "emma")):
            await pilot.press("m")
            await pilot.pause()
            await pilot.press("end" if path == fetched else "home", "enter")
            await waiting.until(pilot, lambda p=path, t=text: scr.query_one("#tr-name").value == t and scr.maps is not None
                                and str(scr.checkpoint.path) == str(p), 60, f"{path.name} with {text!r}")
            assert isinstance(app.focused, AttentionGrid) and scr.query_one(Select).value == str(path)
            await pilot.press("down")
            await pilot.pause()
            assert scr.query_one(AttentionGrid).cursor == (1, 0) and scr.query_one(Select).value == str(path)
            await pilot.press("up")
        assert "✗" not in _text(scr.query_one("#tr-status")) and all_problems(app) == []


async def test_a_sentence_too_long_for_the_stepper_comes_back_to_be_shortened(app, fetched):
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("a")
        await pilot.pause()
        scr = app.screen
        await pilot.press("c")
        app.screen.dismiss(fetched)
        await waiting.until(pilot, lambda: scr.input_mode == "model", 15, "the input")
        box = scr.query_one("#att-input")
        assert box.border_title == "layer, head (from 1) and your sentence"
        box.value = "2 1 My cat sat at the door"  # 14 pieces of the small BPE, over the stepper's 8
        await pilot.press("enter")
        await waiting.until(pilot, lambda: "at most 8 tokens" in _text(scr.query_one("#att-message")), 30,
                            "the refusal", describe=lambda: _text(scr.query_one("#att-message")))
        assert scr.input_mode == "model" and box.display and box.value == "2 1 My cat sat at the door"
        box.value = "2 1 the cat sat"
        await pilot.press("enter")
        await waiting.until(pilot, lambda: "that model's own numbers" in _text(scr.query_one("#att-message")), 30,
                            "the layer")
        assert scr.state.name == "the␣cat␣sat · layer 2/2, head 1/4 (L1H0)"


async def test_surprise_of_a_continuation_longer_than_the_context_scores_what_fits(app, fetched):
    """The score key fills in the highlighted continuation: its bytes can re-encode to more tokens
    than the context (found on the walk: a refusal on arrival); the first context's worth is scored."""
    from minigpt.playground.generation import load_for_playground
    from minigpt.text_scoring import token_surprise
    from tui.playground.playground_score import ScoreScreen

    loaded = load_for_playground(fetched)
    text = "x" * (N_POSITIONS + 20)  # one token a byte in the small BPE
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(ScoreScreen(loaded, text))
        await pilot.pause()
        scr = app.screen
        total = _text(scr.query_one("#score-total"))
        assert f"its first {N_POSITIONS} of {N_POSITIONS + 20} tokens" in total and "⚠" not in total
        want = token_surprise(loaded.model, loaded.vocab, text[:N_POSITIONS])
        assert [(r.char, r.prob) for r in scr.score.rows] == [(s.piece, s.prob) for s in want]
        assert len(scr.query_one("#score-table").columns) == 5 and scr.sub_title == "per-token surprise of a text"
        assert all_problems(app) == []


async def test_a_continuation_with_control_bytes_is_shown_visibly_and_scored_as_sampled(app, fetched):
    """GPT-2 samples any byte: a continuation holding an escape and a newline reached the score
    field raw. The field shows them made visible; scoring it unchanged scores the sampled text."""
    from textual.widgets import Input

    from minigpt.playground.generation import load_for_playground
    from minigpt.text_scoring import token_surprise
    from tui.playground.playground_score import ScoreScreen

    loaded = load_for_playground(fetched)
    text = "ab\x1b[31mc\nd"
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(ScoreScreen(loaded, text))
        await pilot.pause()
        scr = app.screen
        assert scr.query_one(Input).value == "ab␛[31mc␊d"
        want = token_surprise(loaded.model, loaded.vocab, text)
        assert [(r.char, r.prob) for r in scr.score.rows] == [(s.piece, s.prob) for s in want]


def test_the_normalised_embedding_is_built_once_per_loaded_model(source, monkeypatch):
    """The tokens explorer asks for nearest tokens on every edit: GPT-2's unit-length embedding
    (150 MB) is built once per model, again only when its weights change in place or for another
    model, and it goes with the model."""
    import gc

    from minigpt.teaching import model_views

    built = []
    normalize = model_views.F.normalize
    monkeypatch.setattr(model_views.F, "normalize", lambda *a, **kw: built.append(1) or normalize(*a, **kw))
    first, second = load_gpt2(source), load_gpt2(source)
    rows = nearest_tokens(first, " the cat", k=3)
    assert nearest_tokens(first, " the", k=3) == rows[:1] and nearest_tokens(first, " cat sat", k=2)
    assert len(built) == 1
    assert nearest_tokens(second, " the cat", k=3) == rows and len(built) == 2  # another model: its own
    with torch.no_grad():
        first.model.tok_emb.weight[1:] *= -1  # every row but the first turned around: new neighbours
    unit = model_views.unit_embedding(first.model)
    assert len(built) == 3
    torch.testing.assert_close(unit, torch.nn.functional.normalize(first.model.tok_emb.weight.detach(), dim=1))
    kept = len(model_views._UNIT_EMBEDDINGS)
    del first, unit
    gc.collect()
    assert len(model_views._UNIT_EMBEDDINGS) == kept - 1


@pytest.fixture
def varied():
    """A fetched GPT-2 whose LayerNorm gains and shifts are not all 1 and 0 (a norm view of ones
    would agree with anything)."""
    folder = write_random_gpt2(paths.user_data_dir() / "models" / "varied-gpt2", seed=1)
    weights = load_file(folder / "model.safetensors")
    generator = torch.Generator().manual_seed(2)
    for name in [n for n in weights if ".ln_" in n or n.startswith("ln_f.")]:
        weights[name] = weights[name] + 0.3 * torch.randn(weights[name].shape, generator=generator)
    save_file(weights, folder / "model.safetensors")
    return folder


async def test_the_norms_and_scaling_explorers_measure_a_fetched_gpt2(app, varied):
    """Both explorers apply to GPT-2 as they do to our models (pre-norm LayerNorms with γ and β;
    q·k at its own d_k), so both list the folder hf fetch keeps; what they show is read from its file."""
    from minigpt.teaching.model_views import PROBE_NAMES, scaling_view

    weights = {k: v.double() for k, v in load_file(varied / "model.safetensors").items()}
    gpt2 = load_gpt2(varied)
    async with app.run_test(size=(80, 24)) as pilot:
        scr = navigation.open_screen(app, "explorer.norms")
        await pilot.pause()
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert any(path == varied and "pretrained" in label for label, path in app.screen.rows)
        app.screen.dismiss(varied)
        await waiting.until(pilot, lambda: scr.model is not None, 60, "the GPT-2's norms",
                            describe=lambda: _text(scr.query_one("#n-error")))
        await pilot.pause()
        table = scr.query_one("#n-model-table", MatrixView)
        assert table.panel.row_labels == ["1.ln1", "1.ln2", "2.ln1", "2.ln2", "ln_f"]
        for i, name in enumerate(("h.0.ln_1", "h.0.ln_2", "h.1.ln_1", "h.1.ln_2", "ln_f")):
            gamma, beta = weights[f"{name}.weight"], weights[f"{name}.bias"]
            assert [table.cell_text(i, j) for j in range(4)] == [
                fmt(float(v), table.decimals) for v in (gamma.mean(), gamma.min(), gamma.max(), beta.mean())]
        # What block 1's first norm receives: each probe name's token and position embeddings, after
        # the start token <|endoftext|> (read from the file, no model run).
        rows = [[gpt2.start_token, *gpt2.tokenizer.encode(name)] for name in PROBE_NAMES]
        spreads = torch.cat([(weights["wte.weight"][ids] + weights["wpe.weight"][:len(ids)]).std(-1, unbiased=False)
                             for ids in rows])
        assert table.cell_text(0, 4) == fmt(float(spreads.mean()), table.decimals)
        assert all_problems(app) == []
        app.pop_screen()
        await pilot.pause()

        scr = navigation.open_screen(app, "explorer.scaling")
        await waiting.until(pilot, lambda: scr.demos, 60, "the random demo")
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert any(path == varied for _, path in app.screen.rows)
        app.screen.dismiss(varied)
        await waiting.until(pilot, lambda: scr.model is not None, 60, "the GPT-2's q·k")
        await pilot.pause()
        want = scaling_view(gpt2)
        text = _text(scr.query_one("#sc-model"))
        assert "varied-gpt2 (d_k = 8)" in text and f"std {want.std_raw:.3f} → {want.std_scaled:.3f}" in text
        assert "d_k = 8" in _text(scr.query_one("#sc-table"))
        assert all_problems(app) == []


async def test_the_temperature_sweep_speaks_of_a_gpt2s_tokens(app, fetched):
    """Found on the walk: the sweep on a GPT-2 folder said names, characters and lp/ch of its BPE
    continuations; its columns are per token, from the same batches."""
    from minigpt.playground.generation import Settings, load_for_playground, temperature_sweep
    from tui.playground.playground_sweep import SweepScreen

    loaded = load_for_playground(fetched)
    settings = Settings(n=4, prefix="the cat", max_len=12)
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(SweepScreen(loaded, settings))
        scr = app.screen
        await waiting.until(pilot, lambda: getattr(scr, "columns", None), 60, "the sweep")
        await pilot.pause()
        note = " ".join(_text(scr.query_one("#pg-columns-note")).split())
        assert "4 continuations each" in note and "entropy of the first token" in note
        assert "lp/tok = mean log p per token" in note and "names" not in note and "train" not in note
        first = temperature_sweep(loaded, settings)[0]
        assert f"{first.batch.summary.mean_model_logprob_per_char:.2f} lp/tok" in _text(scr.query_one("#sweep-0_5"))
        assert all_problems(app) == []


async def test_a_gpt2s_measurements_use_the_cores_no_other_process_is_using(app, fetched, monkeypatch):
    """On a busy machine a second torch thread made the norms explorer's view of a GPT-2-small-shaped
    model five times slower (minigpt.training.cpu_policy.idle_core_threads): a GPT-2 folder is
    measured on the idle cores, the tutor's own small models as before, and torch's count comes back."""
    from minigpt.teaching.model_views import norm_view
    from minigpt.training import cpu_policy
    from tui.explorers.explorer_norms import NormsExplorerScreen

    seen = []
    monkeypatch.setattr(cpu_policy, "physical_cores", lambda: 2)
    monkeypatch.setattr(cpu_policy, "measure_busy_cores", lambda seconds=0.25: 1.7)  # another process's 1.7 cores
    monkeypatch.setattr(NormsExplorerScreen, "view_of",
                        staticmethod(lambda ckpt: seen.append(torch.get_num_threads()) or norm_view(ckpt)))
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            scr = navigation.open_screen(app, "explorer.norms")
            await pilot.pause()
            for path in (fetched, paths.checkpoints_dir() / "default"):
                scr.model = None
                await pilot.press("ctrl+l")
                await pilot.pause()
                app.screen.dismiss(path)
                await waiting.until(pilot, lambda: scr.model is not None, 60, f"{path.name}'s norms")
            assert seen == [1, 2] and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
