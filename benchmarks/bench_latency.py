"""How quickly the tutor answers, in a real terminal, against a bare Textual app on the same machine.

Both apps run in tmux at 80×24; the script polls ``tmux capture-pane`` until the expected text is
on the screen, so each figure is what a learner sees, drawing included:

- launch to first frame: ``minigpt`` until its home screen shows, vs a bare Textual app until its
  one line shows;
- keypress to screen: ``?`` (help), ``enter`` on the lesson list (the first lesson, and the
  heaviest: the one whose worked examples take longest to compute) and ``n`` in the attention
  stepper (its next stage), vs the bare app doing the same kind of change: pushing a screenful of
  text in a box (help), pushing a screen with the same lesson's Markdown and nothing else (a
  lesson), updating a block of numbers (a stage); and for the heaviest lesson, how long from
  ``enter`` until ``?`` (help) has answered, pressed as soon as the lesson shows (a lesson
  that computes its examples on the event loop shows its text, then ignores keys meanwhile);

ours and the bare app alternately, trial by trial (the load of a shared machine then weighs on
both alike); first idle, then while a training run (``minigpt train``, niced like the app's
workers) keeps both cores busy. It prints medians and 95th percentiles with the ratios ours / bare; targets: first
frame ≤ 1.5×, keypress ≤ 1.5× while training, for the median and for the p95 (a slow tail is what a
learner notices). The figures move with the machine's load: compare ratios, rerun to trust.

    python benchmarks/bench_latency.py [--trials 20] [--no-training]
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SIZE = ("80", "24")
POLL_S = 0.005

BARE_APP = textwrap.dedent('''
    import sys

    from textual.app import App
    from textual.binding import Binding
    from textual.containers import VerticalScroll
    from textual.screen import Screen
    from textual.widgets import Footer, Header, Markdown, Static

    LESSON = open(sys.argv[1], encoding="utf-8").read().split("+++")[-1]  # the body, front matter off
    HEAVY = open(sys.argv[2], encoding="utf-8").read().split("+++")[-1]
    KEYS = "\\n".join(f"  [b]{k:<14}[/b] {d}" for k, d in [("key " + str(i), "what it does " * 3)
                                                          for i in range(40)])


    class TextScreen(Screen):
        """A screenful of key descriptions in a box: the kind of screen the tutor's help is."""
        BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

        def compose(self):
            yield Header()
            with VerticalScroll():
                yield Static("[b]BARE PUSHED SCREEN[/b]\\n\\n" + KEYS)
            yield Footer()


    class MarkdownScreen(Screen):
        """The same lesson's Markdown, nothing else: the kind of screen a lesson is."""
        BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

        def __init__(self, title, text):
            super().__init__()
            self.title_line, self.text = title, text

        def compose(self):
            yield Header()
            with VerticalScroll():
                yield Static(self.title_line)
                yield Markdown(self.text)
            yield Footer()


    class Bare(App):
        BINDINGS = [Binding("question_mark", "push_text", "Text"), Binding("l", "push_lesson", "Lesson"),
                    Binding("h", "push_heavy", "Heavy lesson"), Binding("n", "stage", "Stage")]

        def compose(self):
            yield Header()
            yield Static("BARE READY")
            yield Static(self.table(1), id="stage")
            yield Footer()

        @staticmethod
        def table(stage):
            rows = [" ".join(f"{(r * 7 + c * 3 + stage) % 10 / 10:6.3f}" for c in range(6)) for r in range(8)]
            return f"stage {stage}\\n" + "\\n".join(rows)

        def action_push_text(self):
            self.push_screen(TextScreen())

        def action_push_lesson(self):
            self.push_screen(MarkdownScreen("BARE LESSON", LESSON))

        def action_push_heavy(self):
            self.push_screen(MarkdownScreen("BARE HEAVY LESSON", HEAVY))

        def action_stage(self):
            stage = self.query_one("#stage")
            stage.update(self.table(2 if "stage 1" in str(stage.render()) else 1))


    Bare().run()
''')


class Pane:
    """One app in a detached tmux session; ``wait_for`` polls what the terminal shows."""

    def __init__(self, name: str, command: str, env: dict[str, str]):
        self.name = name
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
        self.started = time.perf_counter()
        subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", SIZE[0], "-y", SIZE[1],
                        f"env {exports} {command}"], check=True)

    def text(self) -> str:
        return subprocess.run(["tmux", "capture-pane", "-p", "-t", self.name], capture_output=True,
                              text=True).stdout

    def wait_for(self, marker: str, timeout: float = 60.0, gone: bool = False) -> float:
        """Seconds until ``marker`` is on screen (or, with ``gone``, off it)."""
        start = time.perf_counter()
        while time.perf_counter() - start < timeout:
            if (marker in self.text()) != gone:
                return time.perf_counter() - start
            time.sleep(POLL_S)
        raise TimeoutError(f"{self.name}: {marker!r} {'still' if gone else 'not'} on screen after {timeout:.0f}s:\n"
                           f"{self.text()}")

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)


def timed_press(pane: Pane, key: str, marker: str, gone: bool = False) -> float:
    """Seconds from sending ``key`` until ``marker`` shows (or, with ``gone``, leaves)."""
    start = time.perf_counter()
    subprocess.run(["tmux", "send-keys", "-t", pane.name, key], check=True)
    pane.wait_for(marker, gone=gone)
    return time.perf_counter() - start


def first_frames(ours: str, bare: str, env: dict[str, str], trials: int) -> tuple[list[float], list[float]]:
    """Launches to first frame, ours and the bare app alternately, so the machine's load (other
    jobs come and go) weighs on both alike."""
    times: dict[str, list[float]] = {"ours": [], "bare": []}
    for i in range(trials):
        for who, command, marker in (("ours", ours, "Learn how GPT works"), ("bare", bare, "BARE READY")):
            pane = Pane(f"bench-first-{who}-{os.getpid()}-{i}", command, env)
            try:
                pane.wait_for(marker)
                times[who].append(time.perf_counter() - pane.started)
            finally:
                pane.close()
            time.sleep(0.3)
    return times["ours"], times["bare"]


# (ours: key, marker, key back, marker back), (bare: the same) for each kind of change
ROUNDS = {
    "help": (("?", "escape closes", "Escape", "escape closes", True),
             ("?", "BARE PUSHED SCREEN", "Escape", "BARE READY", False)),
    "lesson": (("Enter", "You will learn to", "Escape", "read   enter: open", False),
               ("l", "BARE LESSON", "Escape", "BARE READY", False)),
    "heaviest lesson": (("Enter", "You will learn to", "Escape", "read   enter: open", False),
                        ("h", "BARE HEAVY LESSON", "Escape", "BARE READY", False)),
    "stage": (("n", "2/7", "p", "1/7", False),
              ("n", "stage 2", "n", "stage 1", False)),
}


def keypresses(script: Path, env: dict[str, str], trials: int) -> dict[str, tuple[list[float], list[float]]]:
    """Help, a lesson and the stepper's next stage: both apps run side by side and each trial
    presses in ours, then in the bare app (interleaved, so a burst of load hits both)."""
    ours = Pane(f"bench-ours-{os.getpid()}", f"{shlex.quote(sys.executable)} -m tui", env)
    bare = Pane(f"bench-bare-{os.getpid()}", bare_command(script), env)
    out: dict[str, tuple[list[float], list[float]]] = {}
    try:
        ours.wait_for("Learn how GPT works")
        bare.wait_for("BARE READY")
        time.sleep(1.5)
        for what, sides in ROUNDS.items():
            if what == "lesson":
                timed_press(ours, "l", "read   enter: open")
            if what == "heaviest lesson":  # down the list to it (the first round computes its examples)
                subprocess.run(["tmux", "send-keys", "-t", ours.name, "Home"], check=True)
                subprocess.run(["tmux", "send-keys", "-t", ours.name, "-N", str(heaviest_lesson()[0]), "Down"],
                               check=True)
                time.sleep(1.0)
            if what == "stage":
                timed_press(ours, "Escape", "Learn how GPT works")
                timed_press(ours, "a", "1/7")
            times: tuple[list[float], list[float]] = ([], [])
            answered: tuple[list[float], list[float]] = ([], [])
            for i in range(trials + 1):  # the first round warms imports and caches: not counted
                for pane, (key, marker, back, back_marker, back_gone), into, keys_into in zip(
                        (ours, bare), sides, times, answered):
                    t = timed_press(pane, key, marker)
                    if what == "heaviest lesson":  # then help, once it shows: when does it answer a key?
                        shown = "BARE PUSHED SCREEN" if pane is bare else "escape closes"
                        keys_into.append(t + timed_press(pane, "?", shown))
                        timed_press(pane, "Escape", shown, gone=True)
                    timed_press(pane, back, back_marker, gone=back_gone)
                    if not i:
                        del keys_into[:]
                    else:
                        into.append(t)
            out[what] = times
            if what == "heaviest lesson":
                out["heaviest lesson, then ?"] = answered
    finally:
        ours.close()
        bare.close()
    return out


# The lesson whose worked examples take longest to compute (2.0 s against tokenization's 1.0 s, the
# next, measured in one process): its examples fill in after its text (the examples cache).
HEAVIEST = "quantization-lora-checkpointing"


def heaviest_lesson() -> tuple[int, Path]:
    """Its place in the lesson list and its file."""
    sys.path.insert(0, str(REPO))
    from minigpt.lessons import load_lessons

    lessons = load_lessons()
    index = [lesson.id for lesson in lessons].index(HEAVIEST)
    return index, lessons[index].path


def bare_command(script: Path) -> str:
    """The bare app, given the first lesson's file and the heaviest's for its Markdown screens."""
    lesson = sorted((REPO / "lessons" / "chapters").glob("*.md"))[0]
    return " ".join(shlex.quote(str(part)) for part in (sys.executable, script, lesson, heaviest_lesson()[1]))


def start_training(data_dir: Path) -> subprocess.Popen:
    """A GPT run on both cores, at the app's worker priority, until stopped."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "MINIGPT_DATA_DIR": str(data_dir), "OMP_NUM_THREADS": "2"}
    return subprocess.Popen([sys.executable, "-m", "tui.cli", "train", "--time", "3600", "--quiet", "--nice", "5",
                             "--device", "cpu"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def load_average() -> str:
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "?"


def p95(times: list[float]) -> float:
    """The 95th percentile, interpolated between the two nearest samples (20 trials: the 19th-20th)."""
    ordered = sorted(times)
    rank = 0.95 * (len(ordered) - 1)
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def measure(label: str, trials: int, bare_script: Path, env: dict[str, str]) -> dict[str, float]:
    print(f"\n[{label}] load average {load_average()} on {os.cpu_count()} cores", flush=True)
    ours_first, bare_first = first_frames(f"{shlex.quote(sys.executable)} -m tui", bare_command(bare_script),
                                          env, trials)
    presses = keypresses(bare_script, env, trials)
    rows = [("first frame", ours_first, bare_first, 1.5),
            ("help (?)", *presses["help"], 1.5),
            ("a lesson (enter)", *presses["lesson"], 1.5),
            ("heaviest lesson (enter)", *presses["heaviest lesson"], 1.5),
            ("  then ? answers", *presses["heaviest lesson, then ?"], 1.5),
            ("stepper next stage (n)", *presses["stage"], 1.5)]
    print(f"{'what':<25}{'ours':>9}{'bare':>9}{'ratio':>8}{'ours p95':>10}{'bare p95':>10}{'ratio':>8}  target",
          flush=True)
    ratios = {}
    for what, a, b, target in rows:
        ma, mb = statistics.median(a), statistics.median(b)
        pa, pb = p95(a), p95(b)
        ratios[what] = ma / mb
        ratios[what + " p95"] = pa / pb
        print(f"{what:<25}{ma * 1000:>6.0f} ms{mb * 1000:>6.0f} ms{ma / mb:>7.2f}×"
              f"{pa * 1000:>7.0f} ms{pb * 1000:>7.0f} ms{pa / pb:>7.2f}×  ≤ {target:g}×", flush=True)
    print(f"load average after: {load_average()}", flush=True)
    return ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--no-training", action="store_true", help="only the idle measurements")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-latency-") as tmp:
        tmp = Path(tmp)
        bare_script = tmp / "bare_app.py"
        bare_script.write_text(BARE_APP, encoding="utf-8")
        # A fresh profile (first lesson highlighted), 256 colours, the repository's code first.
        env = {"PYTHONPATH": str(REPO), "MINIGPT_DATA_DIR": str(tmp / "data"), "TERM": "xterm-256color"}
        measure("idle", args.trials, bare_script, env)
        if args.no_training:
            return
        worker = start_training(tmp / "train-data")
        try:
            time.sleep(5)  # past the data loading: the steps themselves keep the cores busy
            measure("while a run trains on both cores", args.trials, bare_script, env)
        finally:
            worker.terminate()  # the trainer saves on a stop: on a loaded machine that can take a while
            try:
                worker.wait(timeout=120)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait(timeout=30)


if __name__ == "__main__":
    main()
