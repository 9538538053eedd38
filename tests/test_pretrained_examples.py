"""The lessons' worked examples on a real pretrained model (issue 53, item 3): with a GPT-2 folder
where ``minigpt hf fetch`` puts it (here a random small one), each computes its figure from the
folder's own weights, checked here against the safetensors file and a plain forward pass; with
none, each says how to get one. The examples' cache follows the fetched folders."""

from __future__ import annotations

import pytest
import torch
from safetensors.torch import load_file

from minigpt import paths
from minigpt.pretrained.gpt2 import load_gpt2
from minigpt.teaching.examples import cache
from minigpt.teaching.examples.catalog import EXAMPLES, render_example
from minigpt.teaching.examples.registry import fmt
from tests.helpers.gpt2_folders import write_random_gpt2

IDS = ("pretrained.induction", "pretrained.positions", "pretrained.tokens", "pretrained.sampling",
       "pretrained.kv_memory")


@pytest.fixture
def fetched():
    folder = write_random_gpt2(paths.user_data_dir() / "models" / "tiny-gpt2", n_positions=40)
    return folder, load_gpt2(folder)


def test_without_a_fetched_folder_each_example_says_how_to_get_one():
    for example_id in IDS:
        text = render_example(example_id)
        assert "`minigpt hf fetch gpt2`" in text and "|" not in text, example_id


def test_a_folder_that_does_not_load_is_named_with_its_reason():
    folder = paths.user_data_dir() / "models" / "broken"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text('{"model_type": "gpt2"}')
    assert "The fetched folder `broken` could not be loaded: " in render_example("pretrained.positions")


def test_the_induction_example_ranks_the_folders_heads_by_their_scores(fetched):
    from minigpt.teaching.induction import attention_of, induction_score, previous_token_score, repeated_chunk_ids

    _, ckpt = fetched
    rows = repeated_chunk_ids(10, 4, 0, vocab_size=ckpt.tokenizer.size, start_token=ckpt.start_token)
    assert rows[0, 0] == ckpt.start_token == ckpt.tokenizer.vocab["<|endoftext|>"]
    maps = attention_of(ckpt.model, rows)
    previous, induction = previous_token_score(maps), induction_score(maps, 10)
    layer, head = divmod(int(induction.argmax()), induction.shape[1])
    text = render_example("pretrained.induction")
    first_row = text.split("|---|---|---|\n")[1].splitlines()[0]
    assert first_row == (f"| layer {layer}, head {head} | {fmt(float(induction[layer, head]), 2)} "
                         f"| {fmt(float(previous[layer, head]), 2)} |")
    uniform = sum(1 / t for t in range(12, 22)) / 10  # queries 11..20 see 12..21 keys
    assert f"evenly would score {fmt(uniform, 2)}" in text


def test_the_positions_example_reads_the_folders_wpe(fetched):
    folder, _ = fetched
    wpe = load_file(folder / "model.safetensors")["wpe.weight"].double()
    unit = wpe / wpe.norm(dim=1, keepdim=True)
    one_apart = float((unit[1:] * unit[:-1]).sum(dim=1).mean())
    text = render_example("pretrained.positions")
    assert "40 positions × 32 numbers" in text and f"| 1 apart | {fmt(one_apart, 3)} |" in text
    assert f"‖p0‖ = {fmt(float(wpe[0].norm()), 3)}" in text and f"‖p39‖ = {fmt(float(wpe[39].norm()), 3)}" in text


def test_the_tokens_example_cuts_the_sentence_with_the_folders_merges(fetched):
    from minigpt.teaching.examples.pretrained import TOKENS_SENTENCE

    _, ckpt = fetched
    ids = ckpt.tokenizer.encode(TOKENS_SENTENCE)
    text = render_example("pretrained.tokens")
    assert "␣the" in [ckpt.tokenizer.piece(i) for i in ids]  # a merge of the folder, used
    assert f"{len(ids)} tokens for {len(TOKENS_SENTENCE)} characters" in text and "6 merges" in text
    assert all(len(line) <= 78 for line in text.splitlines() if line.startswith("    "))


def test_the_sampling_example_is_the_models_softmax_after_the_prompt(fetched):
    from minigpt.teaching.examples.pretrained import SAMPLING_PROMPT

    _, ckpt = fetched
    with torch.no_grad():
        logits = ckpt.model(torch.tensor([ckpt.tokenizer.encode(SAMPLING_PROMPT)]))[0][0, -1]
    probs, cooler = logits.softmax(-1), (logits / 0.7).softmax(-1)
    best = int(probs.argmax())
    text = render_example("pretrained.sampling")
    assert f"| {best:,} | {fmt(float(probs[best]), 3)} | {fmt(float(cooler[best]), 3)} |" in text


def test_the_kv_memory_example_measures_what_the_formula_gives(fetched):
    text = render_example("pretrained.kv_memory")
    per_token = 2 * 2 * 32 * 4  # 2 (K and V) · layers · d_model · float32 bytes
    assert f"holds {16 * per_token:,} bytes; the formula gives {16 * per_token:,}" in text
    assert f"| float32 | {per_token} B |" in text


def test_the_cache_computes_them_again_after_a_fetch():
    assert all(EXAMPLES[i].reads_models for i in IDS) and not EXAMPLES["pe.learned.params"].reads_models
    before = cache.cache_key("pretrained.tokens")
    write_random_gpt2(paths.user_data_dir() / "models" / "tiny-gpt2", n_positions=40)
    assert cache.cache_key("pretrained.tokens") != before
