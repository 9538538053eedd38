"""How quickly the tutor answers in a browser tab, next to the same actions in a terminal.

Browser: ``minigpt serve`` on a free loopback port, opened in headless Chromium (the system's,
as in the browser tests). "First screen" is page navigation to the home screen's text in xterm's
buffer; a key's latency is timed inside the page, from the keydown event to the first terminal
write that shows the expected text (so the harness's own round trips do not count).

Terminal: ``minigpt`` in a detached tmux session of the same size (skipped without tmux or with
--no-terminal). "First screen" is process start to the home screen in the pane; a key's latency
is ``tmux send-keys`` to the text appearing in ``capture-pane``, polled every few milliseconds,
so it includes tmux's own costs (a few ms).

A benchmark, not a test: it prints figures and asserts nothing. Run it on a quiet machine:
    python benchmarks/bench_browser.py [--loads 5] [--repeats 15] [--no-terminal]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.browser.harness import (  # noqa: E402
    ServedTutor,
    TutorPage,
    find_chromium,
    launch_chromium,
)

HOME = "Learn how GPT works"
COLS, ROWS = 122, 34  # what the harness's 1100×720 viewport gives at textual-serve's font size
# (key, text that shows the answer, key back, text that shows we are back)
ACTIONS = [
    ("?", "(escape closes)", "Escape", HOME, "? → help"),
    ("l", "enter: open", "Escape", HOME, "l → lessons list"),
]
STEPPER_ACTIONS = [("n", " 2/", "p", " 1/", "n → next stage (stepper)")]


def summary(values: list[float], unit: str, scale: float = 1.0) -> str:
    v = sorted(x * scale for x in values)
    p90 = v[min(len(v) - 1, round(0.9 * (len(v) - 1)))]
    return f"median {statistics.median(v):7.1f} {unit}  p90 {p90:7.1f}  (n={len(v)})"


# ---------------------------------------------------------------------------- browser


def bench_browser(chromium: str, loads: int, repeats: int, work: Path) -> dict[str, list[float]]:
    from playwright.sync_api import sync_playwright

    results: dict[str, list[float]] = {"first screen": []}
    with ServedTutor(work / "browser-data", log_path=work / "serve.log") as server, sync_playwright() as p:
        browser = launch_chromium(p, chromium)
        for _ in range(loads):  # each load is a new tab: a new app process, as a learner's would be
            tab = TutorPage(browser, server.url)
            results["first screen"].append(tab.open(HOME, timeout=60) * 1000)
            tab.close()
        tab = TutorPage(browser, server.url)
        tab.open(HOME, timeout=60)
        for key, shows, back, back_shows, label in ACTIONS:
            results[label] = []
            for _ in range(repeats):
                results[label].append(tab.key_latency_ms(key, shows))
                tab.press(back)
                tab.wait_for_text(back_shows)
        tab.press("a")
        tab.wait_for_text(" 1/")
        for key, shows, back, back_shows, label in STEPPER_ACTIONS:
            results[label] = []
            for _ in range(repeats):
                results[label].append(tab.key_latency_ms(key, shows))
                tab.press(back)
                tab.wait_for_text(back_shows)
        tab.close()
        browser.close()
    return results


# ---------------------------------------------------------------------------- terminal (tmux)


class Tmux:
    started = 0

    def __init__(self, command: str):
        # A private tmux server per session (nobody else's; a killed one may still be closing).
        Tmux.started += 1
        self.socket = f"minigpt-bench-{os.getpid()}-{Tmux.started}"
        self.command = command

    def _tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=10).stdout

    def start(self) -> None:
        self._tmux("new-session", "-d", "-s", "bench", "-x", str(COLS), "-y", str(ROWS), self.command)

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "bench")

    def wait_for(self, text: str, timeout: float = 60.0) -> float:
        start = time.perf_counter()
        while text not in self.screen():
            if time.perf_counter() - start > timeout:
                raise TimeoutError(f"{text!r} not in the pane within {timeout} s:\n{self.screen()}")
            time.sleep(0.002)
        return time.perf_counter() - start

    def key_latency_ms(self, key: str, shows: str) -> float:
        start = time.perf_counter()
        self._tmux("send-keys", "-t", "bench", key)
        self.wait_for(shows, timeout=10)
        return (time.perf_counter() - start) * 1000

    def stop(self) -> None:
        self._tmux("kill-server")


def bench_terminal(loads: int, repeats: int, work: Path) -> dict[str, list[float]]:
    import shlex

    env = f"PYTHONPATH={shlex.quote(str(REPO))} TERM=xterm-256color"
    command = (f"cd {shlex.quote(str(REPO))} && {env} {shlex.quote(sys.executable)} -m tui.cli "
               f"--data-dir {shlex.quote(str(work / 'terminal-data'))}")
    results: dict[str, list[float]] = {"first screen": []}
    for _ in range(loads):
        tmux = Tmux(command)
        try:
            start = time.perf_counter()
            tmux.start()
            tmux.wait_for(HOME)
            results["first screen"].append((time.perf_counter() - start) * 1000)
        finally:
            tmux.stop()
    tmux = Tmux(command)
    try:
        tmux.start()
        tmux.wait_for(HOME)
        for key, shows, back, back_shows, label in ACTIONS:
            results[label] = []
            for _ in range(repeats):
                results[label].append(tmux.key_latency_ms(key, shows))
                tmux.key_latency_ms(back, back_shows)
        tmux.key_latency_ms("a", " 1/")
        for key, shows, back, back_shows, label in STEPPER_ACTIONS:
            results[label] = []
            for _ in range(repeats):
                results[label].append(tmux.key_latency_ms(key, shows))
                tmux.key_latency_ms(back, back_shows)
    finally:
        tmux.stop()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=5, help="page loads / app starts to time")
    parser.add_argument("--repeats", type=int, default=15, help="presses of each key to time")
    parser.add_argument("--no-terminal", action="store_true", help="skip the tmux comparison")
    args = parser.parse_args()

    chromium = find_chromium()
    if chromium is None:
        sys.exit("no Chromium found: install Debian's chromium package or set MINIGPT_CHROMIUM")
    from importlib.metadata import version

    print(f"Chromium {chromium}, textual-serve {version('textual-serve')}, textual {version('textual')}; "
          f"{COLS}×{ROWS} cells; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="bench-browser-") as tmp:
        work = Path(tmp)
        browser = bench_browser(chromium, args.loads, args.repeats, work)
        terminal = None
        if not args.no_terminal and shutil.which("tmux"):
            terminal = bench_terminal(args.loads, args.repeats, work)
    width = max(len(k) for k in browser)
    print(f"{'':<{width}}  {'browser (keydown → xterm write)':<46}"
          + ("terminal (tmux send-keys → pane)" if terminal else ""))
    for label, values in browser.items():
        line = f"{label:<{width}}  {summary(values, 'ms'):<46}"
        if terminal:
            line += summary(terminal[label], "ms")
        print(line)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
