"""GPT-2-family folders in the MiniGPT, against ``transformers`` and ``tokenizers`` (the oracles).

No network: a byte-level BPE is trained by ``tokenizers`` on a small text and saved in GPT-2's
format; a GPT-2 with random weights is built by ``transformers`` from a small config and saved in
the Hugging Face layout. Everything here checks random weights only (real GPT-2 weights cannot be
downloaded in the test environment). transformers' import is slow: it happens once, in the
module's fixture.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner
from safetensors.torch import load_file, save_file

from minigpt.cli import main
from minigpt.errors import CheckpointError, SamplingError
from minigpt.pretrained.byte_bpe import load_byte_bpe, pieces
from minigpt.pretrained.gpt2 import load_gpt2
from minigpt.sampling import continue_text
from minigpt.teaching.induction import head_scores, induction_score, previous_token_score, repeated_chunk_ids
from minigpt.teaching.trained_stepper import trained_state
from minigpt.text_scoring import text_loss, token_surprise
from tests.helpers.floats import LOSS_RTOL, PRETRAINED_LOGITS

REPO = Path(__file__).resolve().parents[1]
TRAINING_TEXT = [
    "It's the tutor's own text: we've read it, they'll see it, I'd say so.\n\n",
    "  Two spaces, a\ttab, and a line break.\nCafé naïve façade 北京 東京 123 4567 ½ x² ١٢٣\n",
    "the theory of the thing, then them; they're there! 2024-12-03 ... --> ?!\n",
] * 30
TEXTS = [
    "Hello world",
    " a leading space",
    "it's  we've\n\n\nthree  \n x",
    "Café 北京 ½ x² ١٢٣ 🙂👍🏽 naïve",
    "tabs\t\tand   \u3000wide spaces",
    "trailing spaces   ",
    "a'S 'll'd 's",
    "\n",
    "x\u00a0y\u2003z",
    "$$$ ... --> ?! (a) [b] {c}",
    "line one\r\nline two\n\n  indented\n",
]
SMALL = {"n_positions": 48, "n_embd": 32, "n_layer": 2, "n_head": 4, "layer_norm_epsilon": 1e-5}


@pytest.fixture(scope="module")
def oracle():
    transformers = pytest.importorskip("transformers")
    transformers.logging.set_verbosity_error()
    return transformers


@pytest.fixture(scope="module")
def folder(tmp_path_factory, oracle):
    """A GPT-2 folder as transformers saves it (prefixed keys), with a tokenizers-trained BPE."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    path = tmp_path_factory.mktemp("gpt2") / "tiny-gpt2"
    path.mkdir()
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(TRAINING_TEXT, trainers.BpeTrainer(
        vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=["<|endoftext|>"]))
    bpe.model.save(str(path))
    torch.manual_seed(0)
    config = oracle.GPT2Config(vocab_size=bpe.get_vocab_size(), bos_token_id=0, eos_token_id=0, **SMALL)
    model = oracle.GPT2LMHeadModel(config).eval()
    model.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def reference(folder, oracle):
    return oracle.GPT2LMHeadModel.from_pretrained(folder, attn_implementation="eager").eval()  # (its weights, shown)


@pytest.fixture(scope="module")
def loaded(folder):
    return load_gpt2(folder)


def hub_layout(source: Path, target: Path) -> Path:
    """``source`` rewritten as the hub's files are: unprefixed names and the mask buffers."""
    shutil.copytree(source, target)
    weights = load_file(source / "model.safetensors")
    n_positions = json.loads((source / "config.json").read_text())["n_positions"]
    renamed = {k.removeprefix("transformer."): v for k, v in weights.items()}
    mask = torch.ones(n_positions, n_positions).tril()[None, None]
    for layer in {k.split(".")[1] for k in renamed if k.startswith("h.")}:
        renamed[f"h.{layer}.attn.bias"] = mask.clone()
    save_file(renamed, target / "model.safetensors")
    return target


def test_the_tokenizer_cuts_and_merges_as_transformers_does(folder, oracle):
    theirs = oracle.GPT2Tokenizer.from_pretrained(folder)
    ours = load_byte_bpe(folder)
    for text in TEXTS:
        ids = ours.encode(text)
        assert ids == theirs.encode(text), text
        assert ours.decode(ids) == text  # bytes back to text, lossless
    assert "".join(pieces("it's  we\n\n x")) == "it's  we\n\n x"


def test_logits_and_loss_match_transformers(folder, reference, loaded):
    text = TEXTS[3] + TEXTS[2]
    ids = torch.tensor([loaded.tokenizer.encode(text)])
    assert ids.shape[1] <= SMALL["n_positions"]  # one window: transformers' own figure
    with torch.no_grad():
        theirs = reference(ids, labels=ids)
        ours, _ = loaded.model(ids)
    torch.testing.assert_close(ours, theirs.logits, **PRETRAINED_LOGITS)
    loss, tokens = text_loss(loaded.model, loaded.tokenizer, text)
    assert tokens == ids.shape[1]
    assert math.isclose(loss, float(theirs.loss), rel_tol=LOSS_RTOL)


def test_a_text_longer_than_the_context_is_read_in_windows_that_share_a_token(folder, reference, loaded):
    text = "".join(TEXTS) * 2
    ids = loaded.tokenizer.encode(text)
    block = SMALL["n_positions"]
    assert len(ids) > 2 * block
    total = 0.0
    with torch.no_grad():
        for start in range(0, len(ids) - 1, block - 1):
            window = torch.tensor([ids[start:start + block]])
            total += float(reference(window, labels=window).loss) * (window.shape[1] - 1)
    loss, tokens = text_loss(loaded.model, loaded.tokenizer, text)
    assert tokens == len(ids)
    assert math.isclose(loss, total / (len(ids) - 1), rel_tol=LOSS_RTOL)
    with pytest.raises(SamplingError, match="more than the 10 one evaluation reads"):
        text_loss(loaded.model, loaded.tokenizer, text, max_tokens=10)


def test_the_hub_layout_with_its_mask_buffers_loads_the_same_model(folder, loaded, tmp_path):
    hub = load_gpt2(hub_layout(folder, tmp_path / "hub"))
    ids = torch.tensor([loaded.tokenizer.encode(TEXTS[2])])
    with torch.no_grad():
        torch.testing.assert_close(hub.model(ids)[0], loaded.model(ids)[0], rtol=0.0, atol=0.0)
    assert hub.model.head.weight is hub.model.tok_emb.weight  # the head stays tied


def test_surprise_is_the_probability_transformers_gives_each_token(reference, loaded):
    text = TEXTS[3]
    ids = loaded.tokenizer.encode(text)
    with torch.no_grad():
        probs = torch.softmax(reference(torch.tensor([ids])).logits[0], dim=-1)
    surprise = token_surprise(loaded.model, loaded.tokenizer, text)
    assert [s.piece for s in surprise] == [loaded.tokenizer.piece(i) for i in ids[1:]]
    for t, s in enumerate(surprise):
        assert math.isclose(s.prob, float(probs[t, ids[t + 1]]), rel_tol=1e-4)
        assert math.isclose(s.bits, -math.log2(s.prob), rel_tol=LOSS_RTOL)
    assert loaded.tokenizer.piece(loaded.tokenizer.encode(" the")[0]).startswith("␣")


def test_continuing_a_text_with_the_cache_matches_greedy_transformers(reference, loaded):
    prompt = "the theory"
    ours = continue_text(loaded.model, loaded.tokenizer, prompt, 12, top_k=1, seed=0)[0]
    ids = torch.tensor([loaded.tokenizer.encode(prompt)])
    with torch.no_grad():
        theirs = reference.generate(ids, max_new_tokens=12, do_sample=False, pad_token_id=0)
    assert ours.text == loaded.tokenizer.decode(theirs[0, ids.shape[1]:].tolist())


def test_the_stepper_shows_one_head_of_any_layer_on_the_learners_sentence(reference, loaded):
    sentence = "it's the theory"
    ids = loaded.tokenizer.encode(sentence)
    with torch.no_grad():
        theirs = reference(torch.tensor([ids]), output_attentions=True).attentions
    for layer, head in ((0, 0), (1, 3)):
        state = trained_state(loaded, sentence, layer, head)
        assert state.tokens == [loaded.tokenizer.piece(i) for i in ids] and "␣the" in state.tokens
        assert f"head {head + 1}/4" in state.name and state.n_heads == 1
        weights = state.compute().heads[0].weights
        torch.testing.assert_close(weights.float(), theirs[layer][0, head], **PRETRAINED_LOGITS)
    with pytest.raises(ValueError, match="at most 8 tokens"):
        trained_state(loaded, TEXTS[3] * 3, 0, 0)
    with pytest.raises(ValueError, match="heads 1 to 4"):
        trained_state(loaded, sentence, 0, 4)


def test_previous_token_and_induction_scores_read_transformers_attention(reference, loaded):
    chunk, config = 10, loaded.model_config
    rows = repeated_chunk_ids(chunk, 3, seed=1, vocab_size=config.vocab_size, start_token=loaded.start_token)
    assert rows[:, 0].tolist() == [0, 0, 0]  # the folder's bos_token_id
    with torch.no_grad():
        maps = torch.stack([torch.stack(reference(row[None], output_attentions=True).attentions)[:, 0] for row in rows])
    scores = head_scores(loaded.model, chunk, 3, seed=1, vocab_size=config.vocab_size, start_token=loaded.start_token)
    torch.testing.assert_close(scores.previous, previous_token_score(maps), **PRETRAINED_LOGITS)
    torch.testing.assert_close(scores.induction, induction_score(maps, chunk), **PRETRAINED_LOGITS)
    assert scores.previous.shape == (config.n_layers, config.n_heads)


def test_the_playground_continues_a_prompt_on_a_fetched_folder(folder, loaded, tmp_path):
    from minigpt.playground.checkpoint_choices import pretrained_choices
    from minigpt.playground.generation import Settings, load_for_playground, run_batch

    models = tmp_path / "models"
    shutil.copytree(folder, models / "tiny-gpt2")
    (models / "not-a-model").mkdir()
    assert [c.path.name for c in pretrained_choices(models)] == ["tiny-gpt2"]
    playground = load_for_playground(models / "tiny-gpt2")
    assert playground.is_text and playground.dataset is None
    batch = run_batch(playground, Settings(n=2, prefix="the theory", max_len=12, top_k=1))
    greedy = continue_text(loaded.model, loaded.tokenizer, "the theory", 12, top_k=1, seed=0)[0].text
    assert [s.text for s in batch.samples] == ["the theory" + greedy] * 2
    with pytest.raises(SamplingError, match="makes 1 to 16 at once"):
        run_batch(playground, Settings(n=50, prefix="the"))


def test_sample_and_eval_commands_on_a_folder(folder, reference, loaded, tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["sample", "--checkpoint", str(folder), "--prefix", "the theory", "--seed", "1",
                                  "--max-len", "8", "--json"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)
    assert row["prompt"] == "the theory" and row["text"]
    text_file = tmp_path / "text.txt"
    text_file.write_text(TEXTS[2], encoding="utf-8")
    result = runner.invoke(main, ["eval", "--checkpoint", str(folder), "--text", str(text_file), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    ids = torch.tensor([loaded.tokenizer.encode(TEXTS[2])])
    with torch.no_grad():
        expected = float(reference(ids, labels=ids).loss)
    assert report["tokens"] == ids.shape[1]
    assert math.isclose(report["loss"], expected, rel_tol=LOSS_RTOL)
    too_long = runner.invoke(main, ["sample", "--checkpoint", str(folder), "--prefix", "x", "--max-len", "500"])
    assert too_long.exit_code == 2 and "must fit the model's context of 48 tokens" in too_long.output
    no_text = runner.invoke(main, ["eval", "--checkpoint", str(folder)])
    assert no_text.exit_code == 2 and "give --text FILE" in no_text.output


def test_sample_uses_the_cores_no_other_process_is_using(tmp_path, monkeypatch):
    """GPT-2 decodes a token at a time: on cores another process needs, a second thread only waits
    (measured: minigpt.training.cpu_policy.idle_core_threads); torch's own count comes back afterwards."""
    from minigpt import sampling
    from minigpt.training import cpu_policy
    from tests.helpers.gpt2_folders import write_random_gpt2

    folder = write_random_gpt2(tmp_path / "tiny-gpt2")
    seen, real = [], sampling.continue_text
    monkeypatch.setattr(sampling, "continue_text", lambda *a, **kw: seen.append(torch.get_num_threads()) or real(*a, **kw))
    monkeypatch.setattr(cpu_policy, "physical_cores", lambda: 2)
    before = torch.get_num_threads()
    for busy, threads in ((1.6, 1), (0.2, 2), (None, 2)):  # None: the CPU's use could not be read
        monkeypatch.setattr(cpu_policy, "measure_busy_cores", lambda seconds=0.25, busy=busy: busy)
        result = CliRunner().invoke(main, ["sample", "--checkpoint", str(folder), "--prefix", "the", "--max-len", "3"])
        assert result.exit_code == 0, result.output
        assert seen[-1] == threads and torch.get_num_threads() == before


def _broken(folder: Path, tmp_path: Path, change) -> Path:
    copy = tmp_path / "broken"
    shutil.copytree(folder, copy)
    change(copy)
    return copy


def _config_with(**values):
    def change(copy: Path) -> None:
        config = json.loads((copy / "config.json").read_text())
        config.update(values)
        (copy / "config.json").write_text(json.dumps(config))
    return change


@pytest.mark.parametrize(("change", "message"), [
    (lambda p: (p / "merges.txt").unlink(), "merges.txt is missing"),
    (lambda p: (p / "vocab.json").write_text("[1, 2]"), "vocab.json: not a JSON object"),
    (lambda p: (p / "model.safetensors").unlink(), "model.safetensors is missing"),
    (lambda p: ((p / "vocab.json").unlink(), os.mkfifo(p / "vocab.json")), "a pipe (FIFO), not a regular file"),
    (lambda p: (p / "model.safetensors").write_bytes(b"\xff" * 64), "not a safetensors file"),
    (lambda p: ((p / "model.safetensors").rename(p / "pytorch_model.bin")), "a pickle, which the tutor never opens"),
    (_config_with(n_embd=64), "transformer.wte.weight has shape"),  # a wte of V × 32 where 64 is said
    (_config_with(model_type="llama"), "only GPT-2-family checkpoints"),
    (_config_with(activation_function="relu"), "activation_function 'relu'"),
    (_config_with(n_layer=3), "transformer.h.2.ln_1.weight is missing"),
    (_config_with(n_layer=1), "unexpected tensors transformer.h.1"),
    (_config_with(n_layer=40, n_embd=768 * 2, n_head=12), "too large"),
])
def test_a_broken_folder_is_one_clear_error(folder, tmp_path, change, message):
    broken = _broken(folder, tmp_path, change)
    with pytest.raises(CheckpointError) as caught:
        load_gpt2(broken)
    assert message in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.soak
def test_gpt2_small_shapes_load_and_run_within_memory_on_two_cores(tmp_path):
    """A random checkpoint of GPT-2 small's exact shapes in the hub's layout (124 M parameters,
    the mask buffers): loaded, one 1,024-token evaluation and 20 sampled tokens, in a child
    process limited to two threads; its peak memory stays under 2.5 GiB."""
    folder = tmp_path / "gpt2-small"
    folder.mkdir()
    d, V, T, L = 768, 50257, 1024, 12
    generator = torch.Generator().manual_seed(0)

    def rand(*shape):
        return torch.randn(*shape, generator=generator) * 0.02

    weights = {"wte.weight": rand(V, d), "wpe.weight": rand(T, d), "ln_f.weight": torch.ones(d), "ln_f.bias": torch.zeros(d)}
    for i in range(L):
        weights |= {f"h.{i}.ln_1.weight": torch.ones(d), f"h.{i}.ln_1.bias": torch.zeros(d),
                    f"h.{i}.ln_2.weight": torch.ones(d), f"h.{i}.ln_2.bias": torch.zeros(d),
                    f"h.{i}.attn.c_attn.weight": rand(d, 3 * d), f"h.{i}.attn.c_attn.bias": torch.zeros(3 * d),
                    f"h.{i}.attn.c_proj.weight": rand(d, d), f"h.{i}.attn.c_proj.bias": torch.zeros(d),
                    f"h.{i}.mlp.c_fc.weight": rand(d, 4 * d), f"h.{i}.mlp.c_fc.bias": torch.zeros(4 * d),
                    f"h.{i}.mlp.c_proj.weight": rand(4 * d, d), f"h.{i}.mlp.c_proj.bias": torch.zeros(d),
                    f"h.{i}.attn.bias": torch.ones(T, T).tril()[None, None]}
    save_file(weights, folder / "model.safetensors")
    del weights
    (folder / "config.json").write_text(json.dumps({"model_type": "gpt2", "vocab_size": V, "n_positions": T,
                                                    "n_embd": d, "n_layer": L, "n_head": 12}))
    from minigpt.pretrained.byte_bpe import byte_alphabet

    vocab = {c: i for i, c in enumerate(byte_alphabet().values())}
    vocab |= {f"tok{i}": i for i in range(256, V)}  # ids past the bytes: never produced by the merges
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    code = (
        "import json, resource, sys, time, torch\n"
        "torch.set_num_threads(2)\n"
        "from minigpt.pretrained.gpt2 import load_gpt2\n"
        "from minigpt.text_scoring import text_loss\n"
        "from minigpt.sampling import continue_text\n"
        "t = time.perf_counter(); ck = load_gpt2(sys.argv[1]); loaded = time.perf_counter() - t\n"
        "t = time.perf_counter(); loss, n = text_loss(ck.model, ck.tokenizer, 'x' * 1024); scored = time.perf_counter() - t\n"
        "t = time.perf_counter(); continue_text(ck.model, ck.tokenizer, 'hello', 20, seed=0); sampled = time.perf_counter() - t\n"
        "print(json.dumps({'params': ck.parameters, 'tokens': n, 'load_s': loaded, 'eval_s': scored, 'sample_s': sampled,\n"
        "                  'peak_kib': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True, text=True, cwd=REPO,
                         env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "2"}, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    print(report)  # the times, for the closing note (speeds belong in benchmarks/, not in asserts)
    assert report["params"] == 124_439_808  # GPT-2 small, tied head
    assert report["tokens"] == 1024
    assert report["peak_kib"] < 2.5 * 2**20


async def test_the_stepper_screen_steps_through_a_fetched_gpt2_at_80x24(app, folder, reference, loaded):
    """c lists the folder hf fetch keeps; "2 3 sentence" shows head 3 of layer 2 on the learner's
    own sentence as BPE pieces, the weights transformers computes; the layout fits 80×24."""
    from minigpt import paths
    from tests.helpers.screen_checks import all_problems
    from tests.helpers.waiting import until

    shutil.copytree(folder, paths.user_data_dir() / "models" / "tiny-gpt2")
    sentence = "it's the theory"
    ids = loaded.tokenizer.encode(sentence)
    with torch.no_grad():
        want = reference(torch.tensor([ids]), output_attentions=True).attentions[1][0, 2]
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("a")
        await pilot.pause()
        scr = pilot.app.screen
        await pilot.press("c")
        picker = app.screen
        (row,) = [i for i, (_, path) in enumerate(picker.rows) if path.name == "tiny-gpt2"]
        assert "pretrained" in picker.rows[row][0]
        picker.dismiss(picker.rows[row][1])
        await until(pilot, lambda: scr.input_mode == "model", 15, "the input for a layer, a head and a sentence")
        scr.query_one("#att-input").value = f"2 3 {sentence}"
        await pilot.press("enter")

        def message() -> str:
            return str(scr.query_one("#att-message").render())

        await until(pilot, lambda: "that model's own numbers" in message(), 30, "the GPT-2 layer loaded",
                    describe=message)
        assert scr.state.tokens == [loaded.tokenizer.piece(i) for i in ids]
        assert scr.state.name == "it's␣the␣theory · layer 2/2, head 3/4 (L1H2)"
        torch.testing.assert_close(scr.mh.heads[0].weights.float(), want, **PRETRAINED_LOGITS)
        await until(pilot, lambda: all_problems(app) == [], 15, "a layout with no problems",
                    describe=lambda: str(all_problems(app)))


async def test_the_playground_screen_continues_a_prompt_with_a_fetched_gpt2(make_app, folder, loaded, tmp_path):
    """The playground lists the folder hf fetch keeps, starts it at a few continuations (not fifty
    names) and continues the learner's prefix with GPT-2's own tokens."""
    from minigpt import paths
    from tests.helpers.waiting import until
    from tui.playground.playground import PlaygroundScreen

    shutil.copytree(folder, paths.user_data_dir() / "models" / "tiny-gpt2")
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = PlaygroundScreen(checkpoints_dir=tmp_path / "no-bundled", runs_root=tmp_path / "no-runs")
        app.push_screen(screen)
        await until(pilot, lambda: screen.batch is not None, 30, "the first continuations",
                    describe=lambda: str(screen.query_one("#pg-message").render()) if screen.is_mounted else "")
        assert screen.loaded.checkpoint.path.name == "tiny-gpt2" and screen.loaded.is_text
        assert screen.settings.n == 4 and len(screen.batch.samples) == 4
        for field, value in (("prefix", "the theory"), ("max_len", "12"), ("top_k", "1")):
            screen.query_one(f"#pg-{field}").value = value
        screen.apply_fields()
        await until(pilot, lambda: screen.batch.samples[0].text.startswith("the theory"), 30, "the prefix continued",
                    describe=lambda: str(screen.query_one("#pg-message").render()))
        greedy = continue_text(loaded.model, loaded.tokenizer, "the theory", 12, top_k=1, seed=0)[0].text
        assert [s.text for s in screen.batch.samples] == ["the theory" + greedy] * 4
        table = screen.query_one("#pg-names")  # GPT-2's log p is per BPE token, not per character
        assert "per token" in [str(c.label) for c in table.columns.values()]
        assert "log p/token" in str(screen.query_one("#pg-summary").render())
        # o: the per-token surprise of a typed text (on GPT-2 the score key stays, for text)
        assert screen.check_action("score", ()) is True and screen.check_action("step", ()) is False
        screen.action_score()
        await until(pilot, lambda: type(app.screen).__name__ == "ScoreScreen", 15, "the score screen")
        scorer = app.screen
        scorer.query_one("#score-input").value = "it's the theory"
        scorer.action_score()
        await pilot.pause()
        expected = token_surprise(loaded.model, loaded.tokenizer, "it's the theory")
        assert [(r.char, r.prob) for r in scorer.score.rows] == [(s.piece, s.prob) for s in expected]
        assert scorer.query_one("#score-table").row_count == len(expected)
        assert "per token" in str(scorer.query_one("#score-total").render())


def test_the_positions_and_nearest_tokens_read_the_gpt2_embeddings(reference, loaded):
    from torch.nn import functional as F

    from minigpt.teaching.model_views import nearest_tokens, position_view

    view = position_view(loaded)
    wpe = reference.transformer.wpe.weight.detach().double()
    assert view.learned and view.total == SMALL["n_positions"] and view.positions[-1] == view.total - 1
    torch.testing.assert_close(torch.tensor(view.table, dtype=torch.float64), wpe[view.positions], rtol=0.0, atol=0.0)
    unit = F.normalize(reference.transformer.wte.weight.detach(), dim=1)
    ids = loaded.tokenizer.encode(" the theory")
    rows = nearest_tokens(loaded, " the theory", k=3)
    assert [piece for piece, _ in rows] == [loaded.tokenizer.piece(i) for i in ids]
    for i, (_, neighbours) in zip(ids, rows):
        sims = unit @ unit[i]
        sims[i] = -2.0
        best = sims.topk(3)
        assert [p for p, _ in neighbours] == [loaded.tokenizer.piece(j) for j in best.indices.tolist()]
        torch.testing.assert_close(torch.tensor([v for _, v in neighbours]), best.values, **PRETRAINED_LOGITS)
