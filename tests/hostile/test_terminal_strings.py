"""Terminal strings, library and CLI: control characters from files and models never reach stdout.

The CLI is run in a real subprocess so the bytes checked are the bytes a terminal would get.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from textual.content import Content

from minigpt.text import has_control, markup_escape, printable
from tests.helpers.hostile import C1_CSI, CSI_CLEAR, EVIL, OSC0, OSC52, assert_no_control, decoded, minigpt


def test_printable_makes_each_sequence_visible():
    assert printable(OSC52) == "␛]52;c;cHduZWQ=␇"
    assert printable(CSI_CLEAR) == "␛[2J"
    assert printable(C1_CSI) == "\\x9b2J"
    assert printable("ok\rspoof") == "ok␍spoof"
    assert printable("a\nb\tc") == "a␊b␉c"
    assert printable("a\nb\tc", keep="\n\t") == "a\nb\tc"
    assert printable("\x7f\u202eevil\u2028") == "␡\\u202eevil\\u2028"
    assert printable("caf\udce9") == "caf\\xe9"  # a file name byte that was not UTF-8


def test_printable_leaves_ordinary_text_alone():
    for text in ("émilie", "李小龙", "zoë-anne", "naïve [b]bold[/b]", "emoji 🙂 ok", ""):
        assert printable(text) == text and not has_control(text)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_printable_output_never_holds_a_control_character(text):
    shown = printable(text)
    assert_no_control(shown)
    assert not has_control(shown)
    assert printable(shown) == shown  # already safe text is left as it is
    kept = printable(text, keep="\n")
    assert_no_control(kept.replace("\n", ""))
    assert kept.count("\n") == text.count("\n")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list("[]\\/$@bi =x'\n\x1b\x9b") + ["[b]", "[/]", "\\["])).map("".join))
def test_markup_escape_shows_exactly_the_printable_text(text):
    # Inside the caller's own markup too: a trailing backslash must not eat the closing tag.
    shown = Content.from_markup(f"[b]{markup_escape(text)}[/b]").plain.replace("\u200b", "")
    assert shown == printable(text, keep="\n\t")


def test_sample_prints_generated_names_without_their_escapes(evil_checkpoint, tmp_path):
    r = minigpt("sample", "--checkpoint", str(evil_checkpoint), "-n", "40", "--seed", "1",
                data_dir=tmp_path)
    out, err = decoded(r.stdout), decoded(r.stderr)
    assert r.returncode == 0, err
    assert_no_control(out, "(stdout)")
    assert_no_control(err, "(stderr)")
    assert "␛" in out  # the escapes are there to see, made harmless


def test_sample_json_keeps_the_real_names_escaped_by_json(evil_checkpoint):
    from click.testing import CliRunner

    from tui.cli import main

    r = CliRunner().invoke(main, ["sample", "--checkpoint", str(evil_checkpoint), "-n", "5",
                                  "--seed", "1", "--json"])
    names = [s["name"] for s in json.loads(r.output)]
    assert any("\x1b" in n for n in names) and "\x1b" not in r.output


def test_runs_lists_a_hostile_folder_name_and_error_message(tmp_path):
    runs = tmp_path / "runs"
    run = runs / f"run{OSC0}{CSI_CLEAR}"
    run.mkdir(parents=True)
    (run / "status.json").write_text(json.dumps(
        {"state": "failed", "error": f"boom{OSC52}{C1_CSI}", "model": f"gpt{OSC0}", "step": 3}))
    r = minigpt("runs", data_dir=tmp_path)
    out = decoded(r.stdout)
    assert r.returncode == 0, decoded(r.stderr)
    assert_no_control(out)
    assert "run␛]0;pwned␇␛[2J" in out and "boom␛]52;c;cHduZWQ=␇\\x9b2J" in out


def test_error_lines_show_a_hostile_path_made_visible(tmp_path):
    r = minigpt("watch", f"no{OSC52}such{CSI_CLEAR}", data_dir=tmp_path)
    err = decoded(r.stderr)
    assert r.returncode == 2
    assert_no_control(err)
    assert err.startswith("Error: ") and "no␛]52;c;cHduZWQ=␇such␛[2J" in err
    assert err.count("\n") == 1  # one line


def test_every_evil_sample_is_detected_by_the_assertion():
    # The check the suite relies on must itself catch each sequence it is meant to catch.
    for evil in EVIL:
        try:
            assert_no_control(f"x{evil}y")
        except AssertionError:
            continue
        raise AssertionError(f"{evil!r} not detected")
