import json
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from minigpt import paths
from minigpt.checkpoint import save_checkpoint
from minigpt.cli import main
from minigpt.data import load_dataset
from minigpt.models.config import GPTConfig
from minigpt.models.gpt import MiniGPT
from minigpt.runs.schema import read_config_values
from tests.helpers.floats import LOSS_RTOL

COMMANDS = [[], ["train"], ["sample"], ["eval"], ["runs"]]


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIGPT_DATA_DIR", str(tmp_path / "user"))
    return CliRunner()


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    ds = load_dataset()
    torch.manual_seed(0)
    m = MiniGPT(GPTConfig(vocab_size=ds.vocab.size, block_size=ds.block_size, d_model=16, n_heads=2, n_layers=1))
    path = tmp_path_factory.mktemp("ck") / "checkpoint"
    save_checkpoint(path, m, ds.vocab, train_config={"data": "embedded", "split_seed": 42})
    return path


def one_error_line(result):
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert "Traceback" not in result.output
    return lines[0]


@pytest.mark.parametrize("cmd", COMMANDS)
def test_help_everywhere(runner, cmd):
    r = runner.invoke(main, [*cmd, "--help"])
    assert r.exit_code == 0 and "Usage:" in r.output


def test_the_app_command_reaches_every_headless_command_it_no_longer_imports_at_start(runner):
    """``tui.cli``'s group fetches the headless commands when one is asked for (opening the app
    imports none of them: tests/test_architecture.py); ``minigpt.cli.main`` stays the group
    whichever import of the submodule came first."""
    import importlib

    import click

    import minigpt.cli
    from tui.cli import main as app_main

    assert isinstance(minigpt.cli.main, click.Group) and minigpt.cli.main is main
    assert importlib.import_module("minigpt.cli.main").main is main
    listed = runner.invoke(app_main, ["--help"]).output
    for name in [*main.commands, "watch", "serve", "keys"]:
        assert f"  {name} " in listed, name
    assert runner.invoke(app_main, ["runs", "--help"]).exit_code == 0
    assert runner.invoke(app_main, ["no-such-command"]).exit_code == 2


def _train_help(runner) -> str:
    out = runner.invoke(main, ["train", "--help"], terminal_width=200).output
    return " ".join(out.split())  # click wraps long help lines


def test_train_flags_are_the_option_list(runner):
    """The `train` command's training flags are generated from OPTIONS: one each, nothing else."""
    from minigpt.cli.train import train
    from minigpt.training.options import OPTIONS

    own = {"config_file", "out", "resume", "quiet", "nice", "help",
           "nnodes", "node_rank", "master_addr", "master_port", "rdzv_endpoint", "rdzv_timeout",  # the launcher's
           "run_name", "note",  # what describes the run (its status), not its training
           "data_changed_ok",  # a resume's consent, not a setting
           "seeds",  # how many runs (a seed group), not how one trains
           "notify", "on_event", "target_loss"}  # the learner's alerts, never the run's (minigpt.alerts)
    params = [p for p in train.params if p.name not in own]
    assert [p.name for p in params] == [o.name for o in OPTIONS]
    for p, opt in zip(params, OPTIONS):
        assert opt.cli_flag in p.opts and p.default is None
    help_text = _train_help(runner)
    for flag in ("--config", "--out", "--resume", "--quiet", "--pos", "--tie / --no-tie", "--pack / --no-pack",
                 "--time", "--ema", "--split-seed"):
        assert flag in help_text


def test_train_help_states_every_default(runner):
    from minigpt.training.options import OPTIONS

    help_text = _train_help(runner)
    for opt in OPTIONS:
        assert f"{opt.help} [default: {opt.default_text}]" in help_text, opt.name
    assert "[default: 64]" in help_text and "[default: the longest item + 1]" in help_text


def test_train_from_a_config_file_with_changes(runner, tmp_path):
    """`--config` reads a saved config (a file or a run folder); flags beside it change it."""
    from minigpt.cli.train import config_from_flags
    from minigpt.training.options import TrainConfig

    saved = TrainConfig(d_model=24, n_heads=3, pos_encoding="sinusoidal", tie_weights=True, ema=0.0, steps=40)
    (tmp_path / "config.json").write_text(json.dumps(saved.to_dict()))
    none = {o: None for o in ("lr", "time_s", "steps", "pack")}
    assert config_from_flags(tmp_path / "config.json", none) == saved
    assert config_from_flags(tmp_path, {**none, "lr": 0.01}) == TrainConfig(**{**saved.__dict__, "lr": 0.01})
    timed = config_from_flags(tmp_path, {**none, "time_s": 30.0})  # another budget replaces the saved one
    assert (timed.steps, timed.time_s, timed.d_model) == (None, 30.0, 24)
    names = tmp_path / "n.txt"
    names.write_text("\n".join(Path(paths.default_dataset()).read_text().split()[:200]))
    small = TrainConfig(d_model=8, n_heads=2, n_layers=1, batch_size=8, steps=4, eval_interval=2,
                        pos_encoding="rope", ema=0.0, pack=False, data=str(names))
    (tmp_path / "small.json").write_text(json.dumps(small.to_dict()))
    out = tmp_path / "run"
    r = runner.invoke(main, ["train", "--config", str(tmp_path / "small.json"), "--seed", "3", "--out", str(out),
                             "--quiet"])
    assert r.exit_code == 0, r.output
    assert read_config_values(out / "config.json") == {**small.to_dict(), "seed": 3}


def test_train_errors_name_the_flag(runner, tmp_path):
    assert one_error_line(runner.invoke(main, ["train", "--beta1", "1"])) == \
        "Error: --beta1: beta1 must be in [0, 1), got 1.0"
    assert "--pos: RoPE" in one_error_line(runner.invoke(main, ["train", "--d-model", "12", "--pos", "rope"]))
    line = one_error_line(runner.invoke(main, ["train", "--resume", str(tmp_path), "--lr", "0.1"]))
    assert "--resume continues a run with its own settings: leave out --lr" in line
    assert "no such config file" in one_error_line(runner.invoke(main, ["train", "--config", str(tmp_path / "x")]))


def test_sample_json_deterministic(runner, ckpt):
    args = ["sample", "--checkpoint", str(ckpt), "-n", "8", "--seed", "5", "--json"]
    a, b = runner.invoke(main, args), runner.invoke(main, args)
    assert a.exit_code == 0, a.output
    data = json.loads(a.output)
    assert a.output == b.output and len(data) == 8
    assert all(d["membership"] in ("train", "val", "test", "new") for d in data)
    other = runner.invoke(main, ["sample", "--checkpoint", str(ckpt), "-n", "8", "--seed", "6", "--json"])
    assert other.output != a.output


def test_sample_prefix_and_options(runner, ckpt):
    r = runner.invoke(main, ["sample", "--checkpoint", str(ckpt), "-n", "5", "--seed", "1", "--prefix", "jo",
                             "--top-k", "5", "--top-p", "0.9", "--temperature", "0.8", "--max-len", "6", "--json"])
    assert r.exit_code == 0, r.output
    assert all(d["name"].startswith("jo") and len(d["name"]) <= 6 for d in json.loads(r.output))


@pytest.mark.skipif(not (paths.default_checkpoint() / "config.json").exists(), reason="no default checkpoint")
def test_eval_uses_default_checkpoint(runner):
    r = runner.invoke(main, ["eval", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert Path(data["checkpoint"]).resolve() == paths.default_checkpoint().resolve()
    assert 1.0 < data["val"] < 2.5 and 1.0 < data["test"] < 2.5 and data["train"] > 0


def test_eval_text_gives_the_mean_next_character_loss_of_a_file(runner, ckpt, tmp_path):
    """--text works on the tutor's own models too, through the tokenizer interface; a character
    the vocabulary lacks, or --data beside it, is one error line."""
    from torch.nn import functional as F

    from minigpt.checkpoint import load_checkpoint

    loaded = load_checkpoint(ckpt)
    (tmp_path / "t.txt").write_text("anna.emma", encoding="utf-8")
    r = runner.invoke(main, ["eval", "--checkpoint", str(ckpt), "--text", str(tmp_path / "t.txt"), "--json"])
    assert r.exit_code == 0, r.output
    ids = torch.tensor([loaded.vocab.encode("anna.emma")])
    with torch.no_grad():
        logits, _ = loaded.model(ids)
    expected = float(F.cross_entropy(logits[0, :-1], ids[0, 1:]))
    report = json.loads(r.output)
    assert report["tokens"] == 9 and report["loss"] == pytest.approx(expected, rel=LOSS_RTOL)
    (tmp_path / "bad.txt").write_text("ann4", encoding="utf-8")
    assert "'4' not in the model's vocabulary" in one_error_line(
        runner.invoke(main, ["eval", "--checkpoint", str(ckpt), "--text", str(tmp_path / "bad.txt")]))
    assert "not both" in one_error_line(runner.invoke(main, ["eval", "--checkpoint", str(ckpt), "--text",
                                                              str(tmp_path / "t.txt"), "--data", "x"]))


@pytest.mark.skipif(not (paths.default_checkpoint() / "config.json").exists(), reason="no default checkpoint")
def test_sample_uses_default_checkpoint(runner):
    r = runner.invoke(main, ["sample", "-n", "3", "--seed", "0"])
    assert r.exit_code == 0 and len(r.output.splitlines()) == 3


def test_errors_are_one_clear_line(runner, ckpt, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    binary = tmp_path / "bin.txt"
    binary.write_bytes(b"\x00\x01\x02")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "config.json").write_text("{}")
    cases = [
        (["train", "--data", str(empty)], "empty"),
        (["train", "--data", str(binary)], "binary"),
        (["train", "--data", str(tmp_path / "missing.txt")], "no such file"),
        (["train", "--d-model", "10", "--n-heads", "3"], "divisible"),
        (["train", "--steps", "10", "--time", "5"], "either --steps or --time"),
        (["train", "--lr", "-1"], "learning rate"),
        (["train", "--dropout", "1.5"], "dropout"),
        (["train", "--resume", str(tmp_path)], "not a run folder"),
        (["sample", "--checkpoint", str(bad)], "not a minigpt checkpoint"),
        (["sample", "--checkpoint", str(tmp_path / "nope")], "no such checkpoint"),
        (["sample", "--checkpoint", str(ckpt), "--prefix", "Zoë!"], "not in the model's vocabulary"),
        (["sample", "--checkpoint", str(ckpt), "--temperature", "0"], "temperature"),
        (["sample", "--checkpoint", str(ckpt), "-n", "0"], "at least 1"),
        (["eval", "--checkpoint", str(ckpt), "--data", str(binary)], "binary"),
    ]
    for args, words in cases:
        line = one_error_line(runner.invoke(main, args))
        assert words in line, (args, line)


def test_train_eval_runs_round_trip(runner, tmp_path):
    names = tmp_path / "n.txt"
    names.write_text("\n".join(Path(paths.default_dataset()).read_text().split()[:300]))
    out = tmp_path / "run"
    r = runner.invoke(main, ["train", "--data", str(names), "--d-model", "16", "--n-heads", "2", "--n-layers", "1",
                             "--steps", "20", "--batch-size", "16", "--out", str(out), "--quiet"])
    assert r.exit_code == 0, r.output
    assert "val loss" in r.output and "test loss" in r.output
    r = runner.invoke(main, ["eval", "--checkpoint", str(out / "checkpoint"), "--json"])
    assert r.exit_code == 0 and set(json.loads(r.output)) >= {"train", "val", "test"}
    r = runner.invoke(main, ["train", "--out", str(out)])
    assert "already holds a run" in one_error_line(r)
    # `runs` lists the user folder's runs (this one was written elsewhere with --out)
    r = runner.invoke(main, ["runs", "--json"])
    assert r.exit_code == 0 and json.loads(r.output) == []
    r = runner.invoke(main, ["--data-dir", str(tmp_path / "other"), "runs"])
    assert r.exit_code == 0 and "no runs" in r.output


def test_resume_without_runs_and_run_folder_as_checkpoint(runner, ckpt, tmp_path):
    assert "no run to resume" in one_error_line(runner.invoke(main, ["train", "--resume"]))
    run = tmp_path / "somerun"
    run.mkdir()
    import shutil
    shutil.copytree(ckpt, run / "checkpoint")
    r = runner.invoke(main, ["sample", "--checkpoint", str(run), "-n", "2", "--seed", "0"])
    assert r.exit_code == 0, r.output


def test_library_group_lists_commands_and_never_opens_the_app(runner):
    import subprocess
    import sys
    # In a fresh interpreter: the headless group alone imports neither the app nor Textual.
    code = ("import sys; from click.testing import CliRunner; from minigpt.cli import main; "
            "r = CliRunner().invoke(main, ['--help']); print(r.output); "
            "print('UI', any(m == 'tui' or m.startswith(('tui.', 'textual')) for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "train" in out and "sample" in out
    assert "UI False" in out


def test_console_command_adds_the_app_commands(runner):
    from tui.cli import main as console

    r = runner.invoke(console, ["--help"])
    assert r.exit_code == 0, r.output
    for command in ("train", "sample", "eval", "runs", "watch"):
        assert command in r.output


def test_top_level_help_lists_kata_without_a_doubled_ellipsis():
    """Found walking `minigpt --help`: the kata line ended "a KV-cache step…..." (the docstring's "…"
    followed by click's truncation)."""
    result = CliRunner().invoke(main, ["--help"], terminal_width=80)
    assert result.exit_code == 0
    kata_line = next(line for line in result.output.splitlines() if line.strip().startswith("kata "))
    assert "…..." not in kata_line and "graded" in kata_line
