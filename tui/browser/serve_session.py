"""The app process of one browser tab: ``python -m tui.browser.serve_session``, started by ``minigpt serve``.

textual-serve runs it with Textual's web driver; ``tui.browser.serve_server`` adds the served flags that
``minigpt.serving_policy`` reads, the data folder, and that folder as the working directory (so a
relative path typed in the browser means a file in the learner's own folder).
"""

from __future__ import annotations

from minigpt import serving_policy
from tui.app import TutorApp

GUEST_NOTICE = ("Guest session: your progress and runs live only as long as this tab; "
                "closing it removes them.")


class ServedTutorApp(TutorApp):
    """The tutor as a browser tab shows it; the served rules are applied by the screens."""

    def on_mount(self) -> None:
        super().on_mount()
        if serving_policy.is_guest():
            self.notify(GUEST_NOTICE, title="minigpt-tutor in your browser", timeout=15)


def main() -> None:
    ServedTutorApp().run()


if __name__ == "__main__":
    main()
