"""The training screen's keys and views agree with what they say (issue 50, item 5): the form opens
with no field focused so l and v work, ? lists every key the footer shows, the scrubbed panel names
the step each view really has, and surprise and layer health carry their legends. At 80×24."""

from __future__ import annotations

from minigpt import paths
from tests.helpers import waiting
from tests.helpers.panel import open_panel
from tests.helpers.run_fixtures import write_insight, write_run
from tests.helpers.screen_checks import all_problems
from tui import navigation
from tui.home.help import HelpScreen
from tui.training.inside_views import layers_text, surprise_text, view_steps


def _footer_keys(screen) -> list[str]:
    """The keys the footer shows now, as it displays them."""
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    footer = screen.query_one(Footer)
    return [k.key_display for k in footer.query(FooterKey) if k.key_display != "^p"]


def _help_text(app) -> str:
    return str(app.screen.query_one("#help-body Static").render())


async def test_single_letter_keys_work_on_the_form_before_it_is_focused(make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        navigation.open_screen(app, "training", new=True)
        await pilot.pause()
        screen = app.screen
        assert screen.mode == "form" and app.focused is None
        footer = _footer_keys(screen)
        assert "l" in footer and "⏎" in footer and "^o" not in footer  # l is Runs while no field has the cursor
        await pilot.press("l")
        await waiting.until(pilot, lambda: navigation.is_screen(app.screen, "runs"), 15, "the runs list")
        await pilot.press("escape")
        await waiting.until(pilot, lambda: app.screen is screen, 15, "back on the form")
        await pilot.press("v")
        await waiting.until(pilot, lambda: navigation.is_screen(app.screen, "compare_runs"), 15, "compare runs")
        await pilot.press("escape")
        await waiting.until(pilot, lambda: app.screen is screen, 15, "back on the form")
        assert screen.form.query_one("#f-d_model").value == "64"  # nothing was typed into it
        await pilot.press("enter")  # steps into the form: letters are typed from here
        await pilot.pause()
        assert app.focused.id == "f-d_model" and "l" not in _footer_keys(screen)
        await pilot.press("l")
        assert navigation.is_screen(app.screen, "training")


async def test_help_lists_every_key_the_footer_shows(make_app):
    run = write_run(paths.runs_dir(), "r", state="stopped", step=100)
    (run / "last").mkdir()
    (run / "last" / "config.json").write_text("{}", encoding="utf-8")
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await open_panel(pilot, run)
        panel_screen = app.screen
        for mode in ("panel", "form"):
            # the footer is drawn a frame after the screen (on a busy machine, later still)
            footer = await waiting.until(pilot, lambda: _footer_keys(panel_screen), 15, f"the {mode}'s footer")
            await pilot.press("f1")
            await waiting.until(pilot, lambda: isinstance(app.screen, HelpScreen), 15, "the keys")
            text = _help_text(app)
            listed = {line.split()[0] for line in text.splitlines() if line.startswith("  ") and line.split()}
            shown = {"ctrl+" + k[1:] if k.startswith("^") else "enter" if k == "⏎" else "escape" if k == "esc"
                     else k.split()[0] for k in footer}
            assert shown <= listed, (mode, shown - listed)
            assert "right_square_bracket" not in text  # the key as typed: ]
            await pilot.press("escape")
            await pilot.pause()
            await pilot.press("n")  # then the form
            await pilot.pause()


def test_views_say_the_step_they_really_show(tmp_path):
    from minigpt.runs.insight import read_layer_health, read_surprise

    run = write_run(tmp_path, "r")
    write_insight(run)  # surprise at 50 and 300; layer health every 25 steps
    surprise, health = read_surprise(run), read_layer_health(run)
    assert view_steps(surprise, health, 280) == {"surprise": 50, "layers": 275}
    assert view_steps(surprise, health, 300) == {"surprise": 300, "layers": 300}
    assert view_steps(None, None, 280) == {}


def test_surprise_and_layer_health_carry_their_legends(tmp_path):
    from minigpt.runs.insight import read_layer_health, read_surprise

    run = write_run(tmp_path, "r")
    write_insight(run)
    text = surprise_text(read_surprise(run), (0, 0), 3.2958)
    assert text.plain.splitlines()[1].strip() == "−ln p 0 → 3.30"  # the shades' scale, to ln V
    shades = [span for span in text.spans if span.start < len(text.plain.splitlines()[0]) + 12]
    assert len({str(s.style) for s in shades}) >= 7  # the seven shades, sure to a uniform guess
    health = read_layer_health(run)
    assert "1 outside the band" in layers_text(health).plain  # at 300 the down projection is out
    assert layers_text(health, step=275).plain.splitlines()[-1] == "! and bold: outside its band (none)"


async def test_a_scrubbed_panel_names_each_views_own_step(make_app):
    run = write_run(paths.runs_dir(), "r")
    write_insight(run)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await open_panel(pilot, run)
        panel.scrub_to(280)
        await pilot.pause()
        units = str(panel.query_one("#run-units").render())
        assert "⏪ step 280 · surprise from 50 · layers from 275" in units
        assert "every view at that step" not in units
        panel.scrub_to(300)
        await pilot.pause()
        assert "every view at that step" in str(panel.query_one("#run-units").render())
        for _ in range(2):
            await pilot.press("i")
            await waiting.until(pilot, lambda: all_problems(app) == [], 15, "a layout with no problems",
                                describe=lambda: str(all_problems(app)))
