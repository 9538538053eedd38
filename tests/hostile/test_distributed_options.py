"""Distributed misconfiguration: multi-node options that cannot work are one ``Error:`` line
before any data is read or folder made, and a node waiting for others says where and for how
long, then gives up in one line after ``--rdzv-timeout`` (torchrun alone waits 10–15 minutes in
silence and ends in a traceback)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from minigpt.training import distributed
from tests.helpers.hostile import REPO, bounded, one_error_line
from tui.cli import main


@pytest.mark.parametrize("args, words", [
    (["--rdzv-endpoint", "x:y"], "--rdzv-endpoint 'x:y': the port 'y' should be a number from 1 to 65535"),
    (["--rdzv-endpoint", "x"], "write HOST:PORT"),
    (["--rdzv-endpoint", ":29400"], "write HOST:PORT"),  # not in the sweep: no host
    (["--rdzv-endpoint", "host:0"], "should be a number from 1 to 65535"),
    (["--rdzv-endpoint", "host:70000"], "should be a number from 1 to 65535"),
    (["--nnodes", "2", "--master-addr", "a b"], "--master-addr 'a b': give a host name"),
    (["--nnodes", "2", "--node-rank", "2"], "--node-rank 2: the ranks of 2 node(s) are 0 to 1"),
    (["--nnodes", "2", "--rdzv-timeout", "-5"], "--rdzv-timeout must be from 1 to"),
])
def test_impossible_rendezvous_options_are_one_line(args, words, tmp_path):
    out = tmp_path / "run"
    with bounded(30):
        line = one_error_line(CliRunner().invoke(main, ["train", *args, "--steps", "1", "--out", str(out), "-q"]))
    assert words in line, line
    assert not out.exists()  # checked before the data is read or a folder made


def test_endpoint_parsing_accepts_what_torchrun_accepts():
    assert distributed.parse_endpoint("10.0.0.1:29400") == ("10.0.0.1", 29400)
    assert distributed.parse_endpoint("[::1]:29400") == ("::1", 29400)
    assert distributed.parse_endpoint("node-0.cluster:1") == ("node-0.cluster", 1)


def test_a_missing_second_node_is_said_and_given_up_on(tmp_path):
    """--nnodes 2 with no second node: the address and the wait up front, one line at the end."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "minigpt.cli", "--data-dir", str(tmp_path), "train", "--nnodes", "2",
                           "--master-port", "29617", "--rdzv-timeout", "3", "--steps", "1", "--device", "cpu"],
                          capture_output=True, text=True, timeout=180, cwd=REPO, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"})
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert "waiting up to 3 s for the other node to join at 127.0.0.1:29617" in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error: ")]
    assert errors == ["Error: the 2 nodes did not all join at 127.0.0.1:29617 within 3 s (or a node failed "
                      "before training); nothing was trained"], done.stderr
    assert time.monotonic() - started < 120
