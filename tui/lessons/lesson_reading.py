"""Where the learner is in a lesson: the place restored on arrival, every view remembered, and
"read" once the end and most of the lesson have been on screen.

A lesson counts as read once its end has been on screen *and* most of it has been: every view the
learner rests on for a moment is remembered (across visits, in minigpt.settings.LESSON_SEEN), so jumping to
the end on arrival does not mark it read.

The lesson's height is only known late: the rest of its blocks mount after the first frame,
Markdown parses in a worker thread and reports (TableOfContentsUpdated) when its blocks are
mounted, worked examples fill in after that. So the saved place is restored once every Markdown
widget has reported, with a safety timer for one that never does; and a view is recorded only
then, because before it a long lesson looks a screenful long (on a busy machine that marked
lessons read on arrival and lost their place).

Textual runs a ``call_after_refresh`` callback on whichever screen is current when it is
processed, so a callback queued by a lesson the learner already left (escape, or n/p pressed twice
in a burst) would run after the lesson's widgets are gone. Every deferred entry point is
therefore guarded by :func:`while_shown`, and the timers stop when the screen leaves.
"""

from __future__ import annotations

import functools
import inspect
import time

from textual.containers import VerticalScroll
from textual.timer import Timer
from textual.widgets import Markdown, Static

from minigpt import settings
from tui.lessons.lesson_blocks import READ_SHARE, SETTLE_S, SeenRanges
from tui.saving import keeps_screen


def while_shown(method):
    """Run a deferred callback of the lesson screen only while the screen is still in the app
    (mounted, on the screen stack, not leaving); otherwise do nothing. Sync or async."""
    if inspect.iscoroutinefunction(method):
        @functools.wraps(method)
        async def guarded_async(self, *args, **kwargs):
            if self.is_shown:
                return await method(self, *args, **kwargs)
        return guarded_async

    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        if self.is_shown:
            return method(self, *args, **kwargs)
    return guarded


class ReadingPosition:
    """The reading-position half of :class:`tui.lessons.lesson.LessonScreen` (a Screen with a
    ``lesson``, a ``#lesson-body`` scroll, a ``#lesson-end`` line, ``_all_mounted`` and
    ``_leaving``)."""

    settle_s = SETTLE_S  # a view counts as seen once the learner rests on it this long
    restore_safety_s = 3.0  # the safety net's period, for a Markdown widget that never reports
    examples_wait_s = 15.0  # how long the safety net waits for worked examples still computing

    def _init_reading(self) -> None:
        self._restoring = True
        self._settle: Timer | None = None
        self._safety: Timer | None = None
        self.seen = SeenRanges()
        self._rendered: set[int] = set()  # Markdown widgets that have reported their layout
        self._saved_position = 0.0
        self._record_pending = False  # a view to record once every block has rendered
        self._known_laid_out = False  # _laid_out was true and no block has changed since
        self._reading_since = time.monotonic()
        self._holding_place = True  # _hold_restored keeps the restored fraction until the learner acts

    def _start_reading(self) -> None:
        """On mount: follow the scroll, load the saved place and the views seen before, arm the
        safety net."""
        body = self.query_one("#lesson-body", VerticalScroll)
        self.watch(body, "scroll_y", self._on_scroll, init=False)
        self._saved_position = self.app.store.lesson_position(self.lesson.id)
        self._mark_opened()
        # a damaged record reads as nothing seen: it only costs the memory of what was seen
        self.seen = SeenRanges(settings.get(self.app.store, settings.LESSON_SEEN.of(self.lesson.id)))
        self._safety = self.set_timer(self.restore_safety_s, self._restore_if_pending)

    def _stop_timers(self) -> None:
        for timer in (self._safety, self._settle):
            if timer is not None:
                timer.stop()
        self._safety = self._settle = None

    @property
    def is_shown(self) -> bool:
        """The screen is mounted, on the app's screen stack and not on its way out, so its widgets
        can be queried. Deferred callbacks check this before touching them."""
        if self._leaving or not self.is_attached or self._closing or self._closed:
            return False
        try:
            return self in self.app.screen_stack
        except Exception:  # no app (any more)
            return False

    @property
    def position_restored(self) -> bool:
        """True once the saved reading position has been applied (or given up on)."""
        return not self._restoring

    @while_shown
    def on_markdown_table_of_contents_updated(self, event: Markdown.TableOfContentsUpdated) -> None:
        self._rendered.add(id(event.markdown))
        self._restore_when_rendered()
        if self._record_pending and self._laid_out:
            self.call_after_refresh(self._record)

    @property
    def _laid_out(self) -> bool:
        """Every block is mounted and every Markdown widget has parsed and reported, so the
        lesson's height is its real one (before that, a long lesson can look like it fits).
        Remembered once true, so a scroll event does not query every widget of the lesson; a
        block mounted or filled since calls ``_layout_changed``."""
        if not self._known_laid_out:
            self._known_laid_out = self._all_mounted and all(id(m) in self._rendered for m in self.query(Markdown))
        return self._known_laid_out

    def _layout_changed(self) -> None:
        """Blocks were mounted or replaced (or the screen resized): ask the widgets again."""
        self._known_laid_out = False

    def on_resize(self) -> None:
        self._layout_changed()

    def _blocks_final(self) -> bool:
        """Every block has its final content (the lesson screen: every worked example filled), so
        the lesson's height is the one the saved fraction was taken from."""
        return True

    @while_shown
    def _restore_when_rendered(self) -> None:
        if self._restoring and self._laid_out and self._blocks_final():
            self.call_after_refresh(self._restore, self._saved_position, 5)

    @while_shown
    def _restore_if_pending(self) -> None:
        """The safety net, for a Markdown widget that never reports. On a busy machine it can fire
        before the rest of the lesson is even mounted: then it waits another round, because
        restoring (and recording the view) now would see a lesson a screenful long."""
        if not self._restoring:
            return
        # Examples still computing are waited for up to examples_wait_s (their child answers in
        # seconds, slower on a busy machine; one that never does must not keep the lesson from
        # ever being recorded). A time, not a count of rounds: the period is shortened in tests.
        waited = time.monotonic() - self._reading_since
        if not self._all_mounted or (not self._blocks_final() and waited < self.examples_wait_s):
            self._safety = self.set_timer(self.restore_safety_s, self._restore_if_pending)
            return
        self._restore(self._saved_position, 5)

    @while_shown
    def _restore(self, fraction: float, retries: int) -> None:
        if not self._restoring or not self._all_mounted:
            return
        body = self.query_one("#lesson-body", VerticalScroll)
        if body.max_scroll_y <= 0 and retries > 0:
            # Layout of the freshly mounted blocks lands on a later refresh.
            self.call_after_refresh(self._restore, fraction, retries - 1)
            return
        # If the learner already scrolled while the lesson rendered, their position wins.
        if fraction > 0 and body.max_scroll_y > 0 and body.scroll_y == 0:
            body.scroll_to(y=fraction * body.max_scroll_y, animate=False, immediate=True)
            self.call_after_refresh(self._hold_restored, fraction, body.scroll_y, 5)
        self._restoring = False
        self._record()
        self.position_settled()

    def position_settled(self) -> None:
        """Called once the saved place has been restored: the screen's hook for what waited on it."""

    def release_restored_place(self) -> None:
        """The learner moved on their own (a key that scrolls to a snippet): stop holding the
        restored fraction, whose next refresh would otherwise scroll back over their move."""
        self._holding_place = False

    @while_shown
    def _hold_restored(self, fraction: float, placed_at: float, refreshes: int) -> None:
        """The lesson may still grow a few lines after the restore (its end line, a late block):
        keep the saved fraction for a few refreshes, unless the learner has scrolled since."""
        body = self.query_one("#lesson-body", VerticalScroll)
        if body.scroll_y != placed_at or not self._holding_place:
            return
        if abs(fraction * body.max_scroll_y - placed_at) >= 1:
            body.scroll_to(y=fraction * body.max_scroll_y, animate=False, immediate=True)
        if refreshes > 0:
            self.call_after_refresh(self._hold_restored, fraction, body.scroll_y, refreshes - 1)

    @while_shown
    def _on_scroll(self, _old: float, _new: float) -> None:
        if self._restoring or not self._laid_out:  # a fraction of a half-built lesson means nothing
            return
        self._save_position()
        if self._settle is not None:
            self._settle.stop()
        self._settle = self.set_timer(self.settle_s, self._record)

    @keeps_screen
    def _mark_opened(self) -> None:
        """The lesson is the last one opened from now on (the list says "last read"), even if the
        learner leaves before the rest of it has rendered; its saved position stays as it was."""
        self.app.store.save_lesson_position(self.lesson.id, self._saved_position)

    @keeps_screen
    def _save_position(self, *, read: bool = False) -> None:
        body = self.query_one("#lesson-body", VerticalScroll)
        maximum = body.max_scroll_y
        fraction = 1.0 if maximum <= 0 else body.scroll_y / maximum
        self.app.store.save_lesson_position(self.lesson.id, fraction, reached_end=read)

    def _view_range(self) -> tuple[float, float]:
        body = self.query_one("#lesson-body", VerticalScroll)
        total = max(1, body.virtual_size.height)
        top = body.scroll_y
        return top / total, (top + body.scrollable_content_region.height) / total

    @while_shown
    @keeps_screen
    def _record(self) -> None:
        """Remember the view the learner rests on; mark the lesson read when it has been seen."""
        self._settle = None
        if not self._laid_out:  # a block still rendering: the view counts once the height is real
            self._record_pending = True
            return
        self._record_pending = False
        body = self.query_one("#lesson-body", VerticalScroll)
        maximum = body.max_scroll_y
        self.seen.add(*self._view_range())
        settings.set(self.app.store, settings.LESSON_SEEN.of(self.lesson.id), self.seen.rounded())
        fits = maximum <= 0  # the whole lesson is on the screen
        end_shown = fits or body.scroll_y >= maximum - 1
        read = end_shown and (fits or self.seen.share >= READ_SHARE)
        self._save_position(read=read)
        end = self.query_one("#lesson-end", Static)
        if read:
            # Said in the hint itself: a toast here sat over this very line.
            code = " · c: code it" if self.katas else ""
            end.update("[dim]— end of lesson —[/dim] [b]✓ marked as read[/b]  "
                       f"[dim]n: next lesson · z: chapter quiz{code} · escape: back[/dim]")
        elif end_shown:
            end.update(f"[dim]— end of lesson — {self.seen.share:.0%} of it seen so far; "
                       "page through it (space) to mark it read[/dim]")

    @property
    def is_read(self) -> bool:
        return self.lesson.id in self.app.store.lessons_read()

    @property
    def view_recorded(self) -> bool:
        """The view on screen has been recorded (nothing settling, nothing waiting on a block),
        so what the learner has seen so far is in ``seen`` and the store."""
        return not self._restoring and self._settle is None and not self._record_pending
