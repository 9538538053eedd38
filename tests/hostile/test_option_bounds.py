"""Impossible sizes: every numeric training option has an upper bound, generated here from the
option list itself (``minigpt.training.options.OPTIONS``), so an option added later is covered.

Past its bound an option is refused at once, in one ``Error:`` line that names the flag and the
bound, before any data is read or folder made; at its bound it is accepted. A model within every
bound but too large is refused by the one size rule, and a batch too large for this machine by the
memory estimate, both before anything is allocated (checked in a child that cannot allocate much).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import pytest
from click.testing import CliRunner

from minigpt.errors import ConfigError
from minigpt.training.options import OPTIONS, TrainConfig
from tests.helpers.hostile import REPO, bounded, one_error_line
from tui.cli import main

NUMERIC = [o for o in OPTIONS if o.kind in (int, float)]
BOUNDED = [o for o in NUMERIC if o.le is not None or o.lt is not None]


def test_every_numeric_option_has_an_upper_bound():
    assert [o.name for o in NUMERIC if o not in BOUNDED] == []


def _beyond(opt):
    top = opt.le if opt.le is not None else opt.lt
    return int(top) + 1 if opt.kind is int else float(top) * 10 + 1


@pytest.mark.parametrize("opt", BOUNDED, ids=lambda o: o.name)
def test_past_the_bound_is_one_line_naming_it(opt, tmp_path):
    top = opt.le if opt.le is not None else opt.lt
    out = tmp_path / "run"
    budget = ["--steps", "10"] if opt.name != "steps" else []
    args = ["train", opt.cli_flag, str(_beyond(opt)), "--out", str(out), "-q"]
    if opt.one_of:  # the other budget is unset by giving this one
        budget = []
    with bounded(30):
        line = one_error_line(CliRunner().invoke(main, args + budget))
    assert opt.cli_flag in line and opt.bounds_text().strip().split()[-1] in line, line
    assert format(int(top)) in line or repr(float(top)) in line or str(top) in line, line
    assert not out.exists()  # refused before a folder was made


@pytest.mark.parametrize("opt", [o for o in BOUNDED if o.le is not None], ids=lambda o: o.name)
def test_at_the_bound_the_option_itself_accepts(opt):
    assert opt.check(opt.kind(opt.le)) is None


@pytest.mark.parametrize("value", ["99999999999999999999", "1e400", "-0", "nan", "inf"])
def test_numbers_beyond_any_type(value, tmp_path):
    """--steps 99999999999999999999 started a run that could never end."""
    with bounded(30):
        result = CliRunner().invoke(main, ["train", "--steps", value, "--out", str(tmp_path / "r"), "-q"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert not (tmp_path / "r").exists()


# The cases the sweep found (n_layers 100000, batch 100000000) and some it did not try.
@pytest.mark.parametrize("args, words", [
    (["--n-layers", "100000"], "--n-layers: layers must be in [1, 256], got 100000"),
    (["--batch-size", "100000000"], "--batch-size: batch size must be in [1, 65536], got 100000000"),
    (["--d-model", "65536", "--n-heads", "1"], "d_model must be in [1, 4096]"),
    (["--time", "1e12"], "budget in seconds must be in (0, 604800]"),
    (["--warmup", "1e300"], "warmup must be in [0, 10000000]"),
    (["--model", "mlp", "--mlp-hidden", "10000000"], "hidden units must be in [1, 65536]"),
    (["--model", "bigram", "--smoothing", "1e308"], "smoothing must be in [0, 1000000]"),
    (["--block-size", "1000000"], "block size must be in [2, 16384]"),
])
def test_absurd_sizes_are_refused_at_once(args, words, tmp_path):
    with bounded(30):
        line = one_error_line(CliRunner().invoke(main, ["train", *args, "--out", str(tmp_path / "r"), "-q"]))
    assert words in line, line


MEMORY_LIMIT = 3 << 30


def _limited(*args: str) -> subprocess.CompletedProcess:
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    return subprocess.run([sys.executable, "-m", "minigpt.cli", *args], capture_output=True, text=True,
                          timeout=180, preexec_fn=limit, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"})


def test_a_batch_within_its_bound_but_beyond_memory_is_refused_before_allocating(tmp_path):
    """Within every bound (batch 65536, block 16384, d_model 1024): one step would hold terabytes."""
    out = tmp_path / "run"
    done = _limited("train", "--batch-size", "65536", "--block-size", "16384", "--d-model", "1024",
                    "--n-layers", "2", "--steps", "1", "--device", "cpu", "--out", str(out), "-q")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if line.startswith("Error: ")]
    assert len(lines) == 1 and "one training step would hold about" in lines[0] and "--batch-size" in lines[0]
    assert not (out / "config.json").exists()


def test_the_form_refuses_an_mlp_too_large_as_the_trainer_does():
    """The form once checked only MiniGPT sizes: the one size rule covers every kind."""
    from minigpt.control import form

    values = form.form_from_config(TrainConfig(model="mlp", mlp_context=256, mlp_embd=4096, mlp_hidden=400))
    with pytest.raises(ConfigError, match="this mlp would have .* parameters: more than this tutor trains") as e:
        form.config_from_form(values)
    assert e.value.field == "mlp_hidden"


def test_sampling_and_sweep_numbers_have_bounds_too(tmp_path):
    with bounded(30):
        line = one_error_line(CliRunner().invoke(main, ["sweep", "--axis", "lr=1e-3,2e-3", "--steps", "10",
                                                        "--jobs", "100000"]))
    assert "--jobs must be from 1 to 64, got 100000" in line, line
    with bounded(30):
        line = one_error_line(CliRunner().invoke(main, ["train", "--nnodes", "2", "--rdzv-timeout", "0"]))
    assert "--rdzv-timeout must be from 1 to 86400 seconds, got 0" in line, line
