"""``minigpt plan``: sets the interview day, prints the plan day by day, refuses in one line,
never imports torch."""

import subprocess
import sys
from datetime import date, timedelta

from click.testing import CliRunner

from minigpt.cli.main import main
from minigpt.store import Store
from minigpt.study import plan


def test_plan_sets_the_date_and_prints_each_day(tmp_path):
    runner = CliRunner()
    day = date.today() + timedelta(days=14)
    out = runner.invoke(main, ["--data-dir", str(tmp_path), "plan", "--date", day.isoformat(),
                               "--lessons", "training,layer-norm"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0].startswith(f"Interview on {day:%a %Y-%m-%d}, in 14 days") and "(training, layer-norm)" in lines[0]
    assert lines[1].startswith("On track")
    assert sum(1 for line in lines if line[:3] in ("tod", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")) == 14
    store = Store(tmp_path / "progress.sqlite3")
    assert plan.plan_settings(store) == (day, ("training", "layer-norm"))
    store.close()
    out = runner.invoke(main, ["--data-dir", str(tmp_path), "plan", "--lessons", ""])   # every lesson, same date
    assert out.exit_code == 0 and "Not on track" in out.output and "a day take" in out.output
    out = runner.invoke(main, ["--data-dir", str(tmp_path), "plan", "--date", "2001-01-01"])
    assert out.exit_code == 2 and out.output.startswith("Error: the date 2001-01-01 has passed")
    out = runner.invoke(main, ["--data-dir", str(tmp_path), "plan", "--clear"])
    assert out.exit_code == 0
    out = runner.invoke(main, ["--data-dir", str(tmp_path), "plan"])
    assert out.exit_code == 2 and "no interview date set" in out.output


def test_plan_command_is_torch_free(tmp_path):
    day = (date.today() + timedelta(days=5)).isoformat()
    code = ("import sys; from click.testing import CliRunner; from minigpt.cli.main import main; "
            f"r = CliRunner().invoke(main, ['--data-dir', {str(tmp_path)!r}, 'plan', '--date', {day!r}]); "
            "assert r.exit_code == 0, r.output; assert 'torch' not in sys.modules, 'torch imported'")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_new_cards_a_day_is_set_from_the_plan_command_and_a_scope_change_is_named(tmp_path):
    from minigpt import settings

    runner = CliRunner()
    data = ["--data-dir", str(tmp_path)]
    day = (date.today() + timedelta(days=14)).isoformat()
    out = runner.invoke(main, data + ["plan", "--date", day, "--lessons", "training"])
    assert out.exit_code == 0 and "Not on track" not in out.output and "replacing" not in out.output
    out = runner.invoke(main, data + ["plan", "--lessons", "layer-norm,training", "--new-per-day", "3"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[:2] == ["New cards a day: 3", "Lessons in scope: layer-norm, training (replacing training)"]
    assert "New cards a day: 3 (today 0 of 3 done)" in out.output
    store = Store(tmp_path / "progress.sqlite3")
    assert settings.get(store, settings.NEW_PER_DAY) == 3
    store.close()
    out = runner.invoke(main, data + ["plan", "--new-per-day", "-1"])
    assert out.exit_code == 2 and out.output.startswith("Error: --new-per-day -1: new cards a day is a whole number")
    out = runner.invoke(main, data + ["plan", "--date", "2001-01-01", "--new-per-day", "9"])
    assert out.exit_code == 2  # a refused date changes nothing
    store = Store(tmp_path / "progress.sqlite3")
    assert settings.get(store, settings.NEW_PER_DAY) == 3
    store.close()
