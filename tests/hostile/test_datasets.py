"""Datasets: tiny, huge, damaged, special and strange files refused with one clear message, or
loaded within a bound on memory; and the loader checked against ``str.splitlines`` by hypothesis."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minigpt import corpus
from minigpt.data import MAX_AUTO_BLOCK, DatasetError, EncodedSplit, Vocab, load_dataset, load_words
from minigpt.text_data import load_text
from tests.helpers.hostile import REPO, bounded, denied, write_names
from tui.cli import main


def write(path, content):
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def cli_train(data, *extra):
    """``minigpt train`` in-process: (exit code, output); a bigram, so a success takes a second."""
    r = CliRunner().invoke(main, ["train", "--data", str(data), "--model", "bigram", "-q", *extra])
    return r.exit_code, r.output


def assert_one_line_error(code: int, output: str, pattern: str) -> None:
    assert code == 2, output
    lines = output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), output
    assert re.search(pattern, lines[0]), lines[0]
    assert "Traceback" not in output


# ---------------------------------------------------------------------------- tiny


@pytest.mark.parametrize("content", ["anna\n", "anna\nbob\n", "  anna \n\n\nbob\n  \n"])
def test_fewer_than_three_items_refused_before_a_run_folder_exists(tmp_path, isolated_data_dir, content):
    data = write(tmp_path / "few.txt", content)
    code, out = cli_train(data)
    assert_one_line_error(code, out, r"few\.txt: [12] items?; need at least 3")
    assert not list((isolated_data_dir / "runs").glob("*"))


@pytest.mark.parametrize("n", range(3, 10))
def test_three_to_nine_items_give_nonempty_validation_and_test(tmp_path, n):
    data = write(tmp_path / "small.txt", "\n".join(f"{chr(97 + i)}x{chr(97 + i)}" for i in range(n)))
    ds = load_dataset(data)
    assert (len(ds.train), len(ds.val), len(ds.test)) == (n - 2, 1, 1)


def test_a_small_file_trains_with_a_real_validation_loss(tmp_path):
    data = write(tmp_path / "small.txt", "anna\nbob\ncarl\ndave\neve\n")
    code, out = cli_train(data)
    assert code == 0, out
    val = float(re.search(r"val loss (\S+)", out).group(1))
    assert val > 0.1  # was "val loss 0.0000" from an empty split


# ---------------------------------------------------------------------------- damaged and special


@pytest.mark.parametrize("content, pattern", [
    (b"", r"the file is empty"),
    (b" \n\t\n\r\n", r"no usable line"),
    (b"anna\nbob\x00by\ncarl\n", r"line 2 contains a NUL byte"),
    (b"anna\nbob\ncl\xe9o\n", r"line 3 is not valid UTF-8 \(byte 0xe9\)"),
    (b"anna\nst.john\ncarl\n", r"line 2 contains '\.'"),
    ("".join(chr(0x4E00 + i) + "\n" for i in range(31_000)).encode(), r"31,000 different characters"),
])
def test_damaged_files_one_line_each(tmp_path, content, pattern):
    code, out = cli_train(write(tmp_path / "bad.txt", content))
    assert_one_line_error(code, out, pattern)


def test_special_paths_refused_without_waiting(tmp_path):
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    with bounded(10):
        for path, pattern in [(fifo, "not a regular file"), ("/dev/zero", "not a regular file"),
                              (tmp_path, "is a folder"), (tmp_path / "missing.txt", "no such file")]:
            for reader in (load_words, load_text):  # one item per line, and one long text
                with pytest.raises(DatasetError, match=pattern):
                    reader(path)
            assert_one_line_error(*cli_train(path), pattern)


def test_symlinks(tmp_path):
    real = write(tmp_path / "real.txt", "anna\nbob\ncarl\n")
    (tmp_path / "link.txt").symlink_to(real)
    assert list(load_words(tmp_path / "link.txt")) == ["anna", "bob", "carl"]
    (tmp_path / "dangling.txt").symlink_to(tmp_path / "gone.txt")
    with pytest.raises(DatasetError, match="no such file"):
        load_words(tmp_path / "dangling.txt")


def test_unreadable_file(tmp_path):
    data = write(tmp_path / "secret.txt", "anna\nbob\ncarl\n")
    denied(data)
    with pytest.raises(DatasetError, match=r"secret\.txt: cannot read \(Permission denied\)"):
        load_words(data)


def test_byte_order_mark_and_old_mac_line_ends(tmp_path):
    assert list(load_words(write(tmp_path / "bom.txt", "\ufeffanna\nbob\ncarl\n"))) == ["anna", "bob", "carl"]
    assert list(load_words(write(tmp_path / "mac.txt", "anna\rbob\rcarl"))) == ["anna", "bob", "carl"]


# ---------------------------------------------------------------------------- long and huge


def test_a_one_megabyte_line_is_cut_at_the_block_size_and_said(tmp_path):
    data = write(tmp_path / "long.txt", "anna\nbob\n" + "x" * 1_000_000 + "\ncarl\ndave\n")
    ds = load_dataset(data)
    assert ds.block_size == MAX_AUTO_BLOCK and ds.cut_items == 1 and ds.longest == 1_000_000
    assert ds.cut_note == ("1 item is longer than 255 characters (the longest has 1,000,000) and is "
                           "cut at the block size 256")
    every = torch.arange(len(ds.train))
    x, _y = ds.train.batch(every)
    assert x.shape[1] <= MAX_AUTO_BLOCK and ds.train.packed_batch(every).x.shape[1] <= MAX_AUTO_BLOCK
    code, out = cli_train(data)
    assert code == 0, out
    assert "note: 1 item is longer than 255 characters" in out


def test_two_hundred_megabytes_peak_within_four_times_the_file(huge_names):
    """Peak memory of loading, measured in a fresh process (was ~50× the file, 10 GB at 200 MB)."""
    # VmHWM, not ru_maxrss: the latter keeps the high-water mark of the (large) pytest process
    # that forked this one.
    probe = textwrap.dedent(f"""
        import time
        import torch
        def status(key):
            with open("/proc/self/status") as f:
                return next(int(l.split()[1]) * 1024 for l in f if l.startswith(key))
        before, start = status("VmRSS:"), time.monotonic()
        from minigpt.data import load_dataset
        ds = load_dataset({str(huge_names)!r})
        ds.train.packed_batch(torch.randint(len(ds.train), (128,)))
        print(len(ds.words), status("VmHWM:") - before, time.monotonic() - start)
    """)
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300,
                       cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"})
    assert r.returncode == 0, r.stderr
    items, grown, seconds = r.stdout.split()
    size = huge_names.stat().st_size
    assert int(items) > 20_000_000
    assert int(grown) < 4 * size, f"peak grew by {int(grown) / size:.1f}× the file"
    assert float(seconds) < 120


# ---------------------------------------------------------------------------- properties


def reference_items(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


_chars = st.sampled_from(list("ab é李\t\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029\u3000\x1b\ufeff"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.lists(_chars, max_size=60).map("".join), chunk=st.sampled_from([3, 7, 1 << 23]))
def test_loader_items_equal_splitlines_strip(tmp_path, monkeypatch, text, chunk):
    monkeypatch.setattr(corpus, "CHUNK_BYTES", chunk)  # small chunks: lines cut across reads
    path = write(tmp_path / "p.txt", text)
    expected = reference_items(text.removeprefix("\ufeff"))
    try:
        items = corpus.read_items(path)
    except DatasetError as e:
        assert not expected and re.search("empty|no usable", str(e)), e
        return
    from minigpt.corpus import WordList

    assert list(WordList(items.points, items.starts, items.lengths)) == expected
    assert sorted(set("".join(expected))) == [chr(c) for c in items.alphabet.tolist()]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.text(st.sampled_from("abc."), min_size=1, max_size=5), min_size=1, max_size=8))
def test_reserved_dot_names_the_editor_line(tmp_path, lines):
    text = "\n".join(lines) + "\n"
    path = write(tmp_path / "d.txt", text)
    if "." not in text:
        return
    with pytest.raises(DatasetError) as e:
        corpus.read_items(path)
    assert f"line {text[: text.index('.')].count(chr(10)) + 1} contains '.'" in str(e.value)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.text(st.sampled_from("abcdé"), min_size=1, max_size=9), min_size=3, max_size=30),
       block=st.integers(2, 12))
def test_file_and_list_encodings_agree(tmp_path, words, block):
    ds = load_dataset(write(tmp_path / "w.txt", "\n".join(words)), block_size=block)
    for split in (ds.train, ds.val, ds.test):
        again = EncodedSplit(list(split.words), ds.vocab, block)
        assert torch.equal(split.x, again.x) and torch.equal(split.y, again.y)
        assert all(ds.membership(w) != "new" for w in split.words)
    assert sorted(ds.words) == sorted(words)


@given(st.lists(st.one_of(st.text(max_size=3), st.integers(), st.none(), st.booleans()), max_size=6))
def test_vocabulary_from_a_checkpoint_is_checked(chars):
    try:
        vocab = Vocab.from_list(chars)
    except DatasetError as e:
        assert "invalid vocabulary" in str(e)
        return
    assert vocab.chars[0] == "." and all(isinstance(c, str) and len(c) == 1 for c in vocab.chars)
    assert vocab.decode(vocab.encode("".join(vocab.chars[1:]))) == "".join(vocab.chars[1:])


def test_generated_file_has_the_requested_size(tmp_path):
    path = write_names(tmp_path / "n.txt", 10_000)
    assert 9_980 <= path.stat().st_size <= 10_000
    assert np.all(np.array([len(w) for w in load_words(path)]) >= 3)
