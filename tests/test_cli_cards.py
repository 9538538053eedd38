"""``minigpt cards --flagged``: lists flags, writes a Markdown report, never imports torch."""

import subprocess
import sys

from click.testing import CliRunner

from minigpt.cli.main import main
from minigpt.store import Store
from minigpt.study import flags


def test_lists_and_exports_flagged_cards(tmp_path):
    store = Store(tmp_path / "progress.sqlite3")
    flags.flag_card(store, "term.query:reverse", "the stem gives the answer away")
    flags.flag_card(store, "num.block-params")
    store.close()
    report = tmp_path / "flags.md"
    runner = CliRunner()
    out = runner.invoke(main, ["--data-dir", str(tmp_path), "cards", "--flagged",
                               "--export", str(report)])
    assert out.exit_code == 0, out.output
    assert "term.query:reverse (query-key-value)" in out.output
    assert "the stem gives the answer away" in out.output
    text = report.read_text()
    assert text.startswith("# Flagged cards") and "## num.block-params" in text
    out = runner.invoke(main, ["--data-dir", str(tmp_path), "cards", "--resolve",
                               "term.query:reverse"])
    assert out.exit_code == 0 and "Resolved" in out.output
    out = runner.invoke(main, ["--data-dir", str(tmp_path), "cards", "--flagged"])
    assert "term.query" not in out.output and "num.block-params" in out.output
    out = runner.invoke(main, ["--data-dir", str(tmp_path), "cards"])  # a bare command lists them
    assert out.exit_code == 0 and out.output.startswith("num.block-params (")
    assert out.output.splitlines()[1].startswith("  Q: ") and "minigpt cards --resolve CARD_ID" in out.output
    out = runner.invoke(main, ["--data-dir", str(tmp_path), "cards", "--resolve", "nope"])
    assert out.exit_code == 2 and "no open flag" in out.output


def test_cards_command_is_torch_free(tmp_path):
    code = ("import sys; from click.testing import CliRunner; from minigpt.cli.main import main; "
            f"r = CliRunner().invoke(main, ['--data-dir', {str(tmp_path)!r}, 'cards', '--flagged']); "
            "assert r.exit_code == 0, r.output; assert 'torch' not in sys.modules, 'torch imported'")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
