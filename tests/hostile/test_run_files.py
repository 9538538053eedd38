"""Run files as text: status.json's text fields and folder names, metrics.jsonl's lines.

Tested through the public readers and ``minigpt runs``: whatever text a run folder holds, the
listing works, says what it can, and prints nothing a terminal would act on. (Numbers of the
wrong type in status.json are the run-folder reader's own cases, issue 11 item 2.)
"""

from __future__ import annotations

import json
from datetime import datetime

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minigpt.runs.listing import list_runs, read_run
from minigpt.runs.metrics import read_metrics
from tests.helpers.hostile import assert_no_control
from tui.cli import main

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_folder = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"),
                  min_size=1, max_size=30).filter(lambda n: n not in (".", "..") and not n.startswith(".")
                                                   and len(n.encode()) < 200)
_fields = st.fixed_dictionaries({}, optional={k: _text for k in
                                              ("state", "error", "model", "device", "started_at", "updated_at")})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=_folder, status=_fields)
def test_any_text_in_a_status_file_lists_safely(isolated_data_dir, name, status):
    runs = isolated_data_dir / "runs"
    run = runs / name
    run.mkdir(parents=True)
    try:
        (run / "status.json").write_text(json.dumps(status), encoding="utf-8")
        info = read_run(run)
        # The schema's reader: a state it does not know, or a date that is not one, is a broken run.
        readable = status.get("state") in ("running", "stopped", "finished", "failed") and all(
            _is_date(status[k]) for k in ("started_at", "updated_at") if k in status)
        assert info.name == name and (info.status == "broken") == (not readable)
        assert [r.path for r in list_runs(runs)] == [run]
        plain = CliRunner().invoke(main, ["runs"])
        assert plain.exit_code == 0, plain.output
        assert_no_control(plain.output)
        listed = json.loads(CliRunner().invoke(main, ["runs", "--json"]).output)
        assert listed[0]["name"] == name and listed[0]["reason"] == info.reason
        if readable and info.status != "failed":  # (a "running" status without a live pid reads as failed)
            assert info.reason == status.get("error")
    finally:
        (run / "status.json").unlink(missing_ok=True)
        run.rmdir()


def _is_date(text: str) -> bool:
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


_line = st.one_of(
    st.binary(max_size=40),
    st.dictionaries(st.text(max_size=5), st.one_of(st.integers(), st.floats(allow_nan=False), st.text(max_size=5)),
                    max_size=3).map(lambda d: json.dumps(d).encode()),
    st.sampled_from([b"NaN", b"[1, 2]", b'{"step": NaN}', b"\xff\xfe", b"{", b"null"]),
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(_line, max_size=12), cuts=st.lists(st.integers(0, 600), max_size=4))
def test_metrics_lines_read_whole_or_in_pieces_alike(tmp_path, lines, cuts):
    data = b"".join(line.replace(b"\n", b" ") + b"\n" for line in lines)
    (tmp_path / "metrics.jsonl").write_bytes(data)
    whole, end = read_metrics(tmp_path)
    assert end == len(data) and all(isinstance(r, dict) for r in whole)
    # The same file read while it grows, cut anywhere: the same records, none twice.
    pieces, offset = [], 0
    for cut in sorted(min(c, len(data)) for c in cuts) + [len(data)]:
        (tmp_path / "metrics.jsonl").write_bytes(data[:cut])
        records, offset = read_metrics(tmp_path, offset)
        pieces += records
    assert pieces == whole and offset == len(data)
