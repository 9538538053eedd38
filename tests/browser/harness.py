"""Drive ``minigpt serve`` in a real headless Chromium, reading back what the terminal shows.

Shared by the browser tests and ``benchmarks/bench_browser.py``.

How the screen is read: textual-serve draws the terminal with xterm.js on a canvas, so the page
has no text to query, and its script keeps the ``Terminal`` object in a closure. An init script
(run before textual-serve's own) installs a one-shot setter for the property name ``terminal`` on
``Object.prototype``: when textual-serve's client does ``this.terminal = new Terminal(…)`` the
setter records that object and turns itself into an ordinary property. ``screen_text`` then reads
xterm's buffer, the cells its renderer paints, row by row: what the learner sees, not the app's
internal state.

The browser is the system's Chromium (Debian's ``chromium`` package); Playwright never downloads
one. Everything binds the loopback address on a free port, and every wait is bounded.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.ports import free_port  # the one allocator of ports

REPO = Path(__file__).resolve().parents[2]
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-dev-shm-usage"]
VIEWPORT = {"width": 1100, "height": 720}  # about 122 × 38 cells at textual-serve's 16 px font

XTERM_HOOK = """
(() => {
  window.__minigptTerminals = [];
  Object.defineProperty(Object.prototype, 'terminal', {
    configurable: true,
    get() { return undefined; },
    set(value) {
      Object.defineProperty(this, 'terminal', {value, writable: true, configurable: true, enumerable: true});
      if (value && value.buffer && value.buffer.active) window.__minigptTerminals.push(value);
    },
  });
  window.__minigptScreen = () => {
    const term = window.__minigptTerminals[0];
    if (!term) return '';
    const buffer = term.buffer.active, rows = [];
    for (let y = 0; y < term.rows; y++) {
      const line = buffer.getLine(buffer.viewportY + y);
      rows.push(line ? line.translateToString(true) : '');
    }
    return rows.join('\\n');
  };
})();
"""


def find_chromium() -> str | None:
    """A Chromium on this machine: $MINIGPT_CHROMIUM, else the first of the usual names on PATH."""
    explicit = os.environ.get("MINIGPT_CHROMIUM")
    if explicit:
        return explicit if Path(explicit).exists() else None
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def artifacts_dir() -> Path:
    """Where screenshots go: $MINIGPT_TEST_ARTIFACTS or test-artifacts/browser (git-ignored)."""
    folder = Path(os.environ.get("MINIGPT_TEST_ARTIFACTS") or REPO / "test-artifacts") / "browser"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class ServedTutor:
    """``minigpt serve`` in a subprocess (its own process group), on a free loopback port."""

    def __init__(self, data_dir: Path | None, *args: str, log_path: Path, env: dict | None = None):
        self.port = free_port()
        self.args = ["serve", "--port", str(self.port), *args]
        if data_dir is not None:
            self.args += ["--data-dir", str(data_dir)]
        self.data_dir = data_dir
        self.log_path = log_path
        self.env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                    **(env or {})}
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def start(self, timeout: float = 30.0) -> ServedTutor:
        self._log = open(self.log_path, "ab")
        self.process = subprocess.Popen([sys.executable, "-m", "tui.cli", *self.args], cwd=REPO, env=self.env,
                                        stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"minigpt serve exited ({self.process.returncode}):\n{self.log_tail()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise TimeoutError(f"minigpt serve did not listen within {timeout:.0f} s:\n{self.log_tail()}")

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self, timeout: float = 20.0) -> int | None:
        """SIGTERM to the server's group (the server stops its sessions), SIGKILL if it lingers."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(5)
            except ProcessLookupError:
                pass
        self._log.close()
        return self.process.returncode

    def __enter__(self) -> ServedTutor:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def launch_chromium(playwright, executable: str):
    return playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, timeout=30_000)


class TutorPage:
    """One browser tab on the served tutor: keys in, the terminal's text out."""

    def __init__(self, browser, url: str):
        self.page = browser.new_page(viewport=VIEWPORT)
        self.page.add_init_script(XTERM_HOOK)
        self.url = url

    def open(self, expect: str = "Learn how GPT works", timeout: float = 30.0) -> float:
        """Load the page and wait for ``expect`` on the terminal; returns the seconds it took."""
        start = time.perf_counter()
        self.page.goto(self.url, timeout=timeout * 1000)
        self.wait_for_text(expect, timeout=timeout)
        took = time.perf_counter() - start
        # Keys go to xterm's hidden textarea, which a click on the terminal focuses.
        self.page.click(".textual-terminal", timeout=5_000)
        return took

    def screen_text(self) -> str:
        return self.page.evaluate("window.__minigptScreen()")

    def wait_for_text(self, *texts: str, timeout: float = 15.0) -> str:
        """Wait until every one of ``texts`` is on the terminal; the screen's text, or an error showing it."""
        check = "(texts) => { const s = window.__minigptScreen ? window.__minigptScreen() : ''; " \
                "return texts.every(t => s.includes(t)); }"
        try:
            self.page.wait_for_function(check, arg=list(texts), timeout=timeout * 1000, polling=50)
        except Exception as e:  # playwright's TimeoutError: say what was on the screen instead
            raise AssertionError(f"{texts!r} not shown within {timeout} s; the terminal shows:\n"
                                 f"{self.screen_text()}") from e
        return self.screen_text()

    def wait_for_gone(self, text: str, timeout: float = 15.0) -> str:
        """Wait until ``text`` is no longer on the terminal (a toast that has expired, say)."""
        check = "(t) => !(window.__minigptScreen ? window.__minigptScreen() : '').includes(t)"
        try:
            self.page.wait_for_function(check, arg=text, timeout=timeout * 1000, polling=100)
        except Exception as e:  # playwright's TimeoutError
            raise AssertionError(f"{text!r} still shown after {timeout} s; the terminal shows:\n"
                                 f"{self.screen_text()}") from e
        return self.screen_text()

    def wait_for_match(self, pattern: str, timeout: float = 15.0) -> str:
        """Wait until a line of the terminal matches the JavaScript regular expression ``pattern``."""
        check = "(p) => new RegExp(p, 'm').test(window.__minigptScreen ? window.__minigptScreen() : '')"
        try:
            self.page.wait_for_function(check, arg=pattern, timeout=timeout * 1000, polling=50)
        except Exception as e:
            raise AssertionError(f"/{pattern}/ not shown within {timeout} s; the terminal shows:\n"
                                 f"{self.screen_text()}") from e
        return self.screen_text()

    def press(self, *keys: str) -> None:
        for key in keys:
            self.page.keyboard.press(key)

    def type(self, text: str) -> None:
        self.page.keyboard.type(text)

    def screenshot(self, name: str) -> Path:
        path = artifacts_dir() / f"{name}.png"
        self.page.screenshot(path=str(path))
        return path

    def key_latency_ms(self, key: str, expect: str, timeout: float = 10.0) -> float:
        """Milliseconds from the key's keydown in the page to the first terminal write showing ``expect``.

        Timed inside the page (performance.now), so the harness's own round trips do not count.
        """
        self.page.evaluate("""(expect) => {
            const term = window.__minigptTerminals[0];
            window.__minigptLatency = new Promise(resolve => {
              let down = null;
              const onKey = () => { if (down === null) down = performance.now(); };
              document.addEventListener('keydown', onKey, {capture: true, once: true});
              const sub = term.onWriteParsed(() => {
                if (down !== null && window.__minigptScreen().includes(expect)) {
                  sub.dispose(); resolve(performance.now() - down);
                }
              });
            });
        }""", expect)
        self.page.keyboard.press(key)
        return float(self.page.evaluate(f"Promise.race([window.__minigptLatency, new Promise((_, reject) => "
                                        f"setTimeout(() => reject(new Error('timeout')), {int(timeout * 1000)}))])"))

    def close(self) -> None:
        self.page.close()
