"""Draw the README's screenshot: the home screen at 80×24, as a fresh learner first sees it.

    python scripts/readme_screenshot.py            # rewrites docs/home-80x24.svg
    python scripts/readme_screenshot.py --check    # exit 1 if the file is not what the app draws now

The app runs headless (Textual's ``App.run_test``) on a throwaway data folder, waits until the
progress glance has counted the lessons and cards, and saves Textual's own SVG export, which
GitHub shows inline. ``tests/test_readme_screenshot.py`` runs the check, so the picture in the
README cannot drift from the app.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCREENSHOT = REPO / "docs" / "home-80x24.svg"
SIZE = (80, 24)
TITLE = "minigpt-tutor"


async def home_screen_svg(data_dir: Path) -> str:
    """The home screen, drawn once its glance has been counted, as SVG text."""
    os.environ["MINIGPT_DATA_DIR"] = str(data_dir)  # a fresh learner, never the real progress
    # The same picture whatever terminal runs the script: the default theme, in colour.
    os.environ["TERM"] = "xterm-256color"
    for name in ("COLORTERM", "NO_COLOR", "TEXTUAL_THEME"):
        os.environ.pop(name, None)
    sys.path.insert(0, str(REPO))
    from minigpt.store import Store
    from tui.app import TutorApp

    app = TutorApp(store=Store(data_dir / "progress.sqlite3"))
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(400):  # the glance counts the decks in a thread: wait for it, at most ~20 s
            await pilot.pause(0.05)
            screen = app.screen
            if type(screen).__name__ == "HomeScreen" and "counting" not in str(
                    screen.query_one("#glance").render()):
                break
        else:
            raise RuntimeError("the home screen's glance was never counted")
        await pilot.pause()
        return app.export_screenshot(title=TITLE)


def render() -> str:
    with tempfile.TemporaryDirectory(prefix="minigpt-screenshot-") as tmp:
        return asyncio.run(home_screen_svg(Path(tmp)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare with the saved file instead of writing it")
    ap.add_argument("--out", type=Path, default=SCREENSHOT, help=f"where to write (default {SCREENSHOT.relative_to(REPO)})")
    args = ap.parse_args(argv)
    svg = render()
    if args.check:
        current = args.out.exists() and args.out.read_text(encoding="utf-8") == svg
        print(f"{args.out}: {'current' if current else 'stale: run python scripts/readme_screenshot.py'}")
        return 0 if current else 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(svg, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
