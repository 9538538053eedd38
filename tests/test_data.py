import pytest
import torch

from minigpt.data import IGNORE, DatasetError, EncodedSplit, Vocab, load_dataset, load_words, pack_rows
from minigpt.splits import split_words


def write(tmp_path, content, name="d.txt"):
    p = tmp_path / name
    p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return p


def test_empty_file(tmp_path):
    p = write(tmp_path, "")
    with pytest.raises(DatasetError, match="empty") as e:
        load_words(p)
    assert str(p) in str(e.value)


def test_only_blank_lines(tmp_path):
    with pytest.raises(DatasetError, match="empty|no usable"):
        load_words(write(tmp_path, "   \n\n \t\n"))


def test_binary_file(tmp_path):
    with pytest.raises(DatasetError, match="line 2.*binary"):
        load_words(write(tmp_path, b"ok\nab\x00cd\n"))


def test_bad_utf8_names_line(tmp_path):
    p = write(tmp_path, b"anna\nbob\ncl\xe9o\n")
    with pytest.raises(DatasetError, match=r"line 3 is not valid UTF-8") as e:
        load_words(p)
    assert str(p) in str(e.value)


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(DatasetError, match="no such file"):
        load_words(tmp_path / "nope.txt")
    with pytest.raises(DatasetError, match="folder"):
        load_words(tmp_path)


def test_blank_lines_and_whitespace_ignored(tmp_path):
    assert load_words(write(tmp_path, "  anna \n\n\nbob\r\n  \nzoé\n")) == ["anna", "bob", "zoé"]


def test_dot_reserved(tmp_path):
    with pytest.raises(DatasetError, match=r"line 2 .*reserved"):
        load_words(write(tmp_path, "anna\nst.john\n"))


def test_vocab():
    v = Vocab.from_words(["bob", "anna"])
    assert v.chars == (".", "a", "b", "n", "o")
    assert v.size == 5
    assert v.encode("nab") == [3, 1, 2]
    assert v.decode([3, 1, 2]) == "nab"
    assert v.unknown("abzz") == ["z"]
    with pytest.raises(ValueError, match="'z' not in"):
        v.encode("z")
    assert Vocab.from_list(list(v.chars)) == v
    with pytest.raises(DatasetError):
        Vocab.from_list(["a", "."])


def test_split_deterministic_80_10_10():
    words = [f"w{i}" for i in range(1000)]
    a, b = split_words(words, seed=42), split_words(words, seed=42)
    assert a == b
    assert (len(a.train), len(a.val), len(a.test)) == (800, 100, 100)
    assert sorted(a.train + a.val + a.test) == sorted(words)
    assert split_words(words, seed=1).train != a.train


def test_input_target_shift_and_padding():
    v = Vocab.from_words(["ab", "b"])
    enc = EncodedSplit(["ab", "b"], v, block_size=4)
    assert enc.x.tolist() == [[0, 1, 2, 0], [0, 2, 0, 0]]
    assert enc.y.tolist() == [[1, 2, 0, IGNORE], [2, 0, IGNORE, IGNORE]]
    assert enc.lengths.tolist() == [3, 2]
    x, y = enc.batch(torch.tensor([1]))
    assert x.shape == (1, 2) and y.tolist() == [[2, 0]]
    x, y = enc.batch(torch.tensor([0, 1]))
    assert x.shape == (2, 3)


def test_packing_worked_by_hand():
    # "abc" (4 positions with the start token), "a" (2), "b" (2), "ab" (3) into rows of 5:
    # the longest, 4, takes a row; 3 takes the next and one 2 joins it; the other 2 is alone.
    v = Vocab.from_words(["abc", "a", "b", "ab"])
    enc = EncodedSplit(["abc", "a", "b", "ab"], v, block_size=5)
    b = enc.packed_batch(torch.tensor([0, 1, 2, 3]))
    assert b.x.tolist() == [[0, 1, 2, 3, 0], [0, 1, 2, 0, 1], [0, 2, 0, 0, 0]]
    assert b.y.tolist() == [[1, 2, 3, 0, IGNORE], [1, 2, 0, 1, 0], [2, 0, IGNORE, IGNORE, IGNORE]]
    assert b.positions.tolist() == [[0, 1, 2, 3, 0], [0, 1, 2, 0, 1], [0, 1, 0, 0, 0]]
    assert b.segments.tolist() == [[0, 0, 0, 0, -1], [3, 3, 3, 1, 1], [2, 2, -1, -1, -1]]


def test_pack_rows_never_overfills_and_places_everything():
    g = torch.Generator().manual_seed(0)
    for _ in range(50):
        lengths = torch.randint(1, 17, (int(torch.randint(1, 200, (1,), generator=g)),), generator=g).tolist()
        row, offset, n_rows = pack_rows(lengths, 16)
        used = {}
        for r, o, n in zip(row, offset, lengths):
            cells = set(range(o, o + n))
            assert o + n <= 16 and not cells & used.setdefault(r, set())
            used[r] |= cells
        assert set(row) == set(range(n_rows))


def test_load_dataset_embedded():
    ds = load_dataset()
    assert ds.vocab.size == 27 and ds.vocab.chars[0] == "."
    assert len(ds.words) == len(ds.splits.train) + len(ds.splits.val) + len(ds.splits.test)
    assert ds.block_size == max(map(len, ds.words)) + 1
    w = ds.splits.val[0]
    assert ds.membership(w) == "val"
    assert ds.membership("zzzzqqqq") == "new"


def test_dataset_characters_outside_given_vocab(tmp_path):
    p = write(tmp_path, "abc\nxyz\nab\n")
    with pytest.raises(DatasetError, match="not in the model's vocabulary"):
        load_dataset(p, vocab=Vocab.from_words(["abc"]))
