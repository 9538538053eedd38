"""The web server behind ``minigpt serve``: textual-serve's server, with the tutor's safety rules.

textual-serve starts one app process per browser tab (a websocket) and relays the terminal to
xterm.js in the page. On top of it this server:

- refuses requests whose ``Host`` is not a loopback name unless the server is public (a web page
  elsewhere cannot reach the tutor by pointing its own domain at 127.0.0.1), and websockets whose
  ``Origin`` is another site (a page the learner visits cannot drive the tutor in the background);
- limits concurrent sessions (a tab over the limit is told so instead of getting an app);
- gives each session its environment: the served flags ``minigpt.serving_policy`` reads, the data
  folder (shared, or a fresh one per tab with ``--guest``), and that folder as working directory;
- removes a guest's folder when its tab disconnects, after stopping the runs it started;
- names the page (``<title>``) and serves the terminal font itself instead of from Google Fonts,
  so a learner's browser asks nothing of a third party and looks the same offline.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import os
import re
import shlex
import shutil
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from html import escape as html_escape
from pathlib import Path
from urllib.parse import urlsplit

from aiohttp import WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.server import Server

import tui
from minigpt import serving_policy
from minigpt.text import printable

log = logging.getLogger("minigpt-serve")

PAGE_TITLE = "minigpt-tutor: learn how GPT works"
STOP_TIMEOUT_S = 10.0  # an app that does not quit on request is killed after this
FULL_MESSAGE_S = 120.0  # how long a tab over the session limit keeps its message before closing
_FONT_LINK = re.compile(r'<link[^>]*fonts\.googleapis\.com[^>]*>\s*')
_HOST_HEADER = re.compile(r"[A-Za-z0-9.\-]+(:[0-9]+)?|\[[0-9A-Fa-f:.]+\](:[0-9]+)?")


def is_loopback_name(host: str) -> bool:
    """Whether ``host`` (a name or an address, without port) always means this machine."""
    name = host.strip().strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name.split("%")[0]).is_loopback
    except ValueError:
        return False


@dataclass
class ServeOptions:
    host: str = "127.0.0.1"
    port: int = 8000
    data_dir: Path | None = None  # shared sessions' folder; None: the per-user folder
    public: bool = False
    guest: bool = False
    allow_code: bool = False
    allow_files: bool = False
    max_sessions: int = 8
    max_runs: int = 1


@dataclass
class Session:
    data_dir: Path
    guest: bool
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])


class SessionService(AppService):
    """textual-serve's app process, started with this session's environment added."""

    def __init__(self, command: str, *, extra_env: dict[str, str], **kwargs):
        super().__init__(command, **kwargs)
        self.extra_env = extra_env

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        environment = super()._build_environment(width=width, height=height)
        environment.update(self.extra_env)
        return environment

    def kill(self) -> None:
        process = self._process  # textual-serve keeps it private; it offers no way to kill a hung app
        if process is not None and process.returncode is None:
            process.kill()

    async def stop_and_reap(self, timeout_s: float) -> None:
        """Ask the app to quit and return once its process is gone; kill it after ``timeout_s``.

        textual-serve's ``stop`` returns when its reader task ends, and that task also ends when a
        write to the tab's already-closed websocket fails. The app can then still be running, with
        nobody reading its output: blocked on a full pipe, or writing into a guest folder that is
        being removed. So wait for the process itself, reading (and dropping) what it still writes.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        try:
            await asyncio.wait_for(asyncio.shield(self.stop()), timeout_s)
        except (TimeoutError, ConnectionError):
            self.kill()
        process = self._process
        if process is None:
            return
        try:
            await asyncio.wait_for(self._drain_until_exit(process), max(0.5, deadline - loop.time()))
        except TimeoutError:
            self.kill()
            await process.wait()

    async def _drain_until_exit(self, process: asyncio.subprocess.Process) -> None:
        if self._task is None and process.stdout is not None:  # nothing else reads it any more
            while await process.stdout.read(1 << 16):
                pass
        await process.wait()


class TutorServer(Server):
    def __init__(self, options: ServeOptions, state_dir: Path | None = None):
        super().__init__(command="minigpt-tutor", host=options.host, port=options.port, title=PAGE_TITLE)
        self.options = options
        self.state_dir = Path(state_dir or tempfile.mkdtemp(prefix="minigpt-serve-"))
        self.sessions: dict[str, Session] = {}
        self._cleanups: set[asyncio.Task] = set()

    # -- what each session gets ------------------------------------------------------------------
    def session_env(self, session: Session) -> dict[str, str]:
        root = str(Path(tui.__file__).resolve().parent.parent)  # the app process imports this tui
        python_path = os.environ.get("PYTHONPATH")
        opts = self.options
        return {
            "PYTHONPATH": root + (os.pathsep + python_path if python_path else ""),
            "MINIGPT_DATA_DIR": str(session.data_dir),
            serving_policy.ENV_SERVED: "1",
            serving_policy.ENV_GUEST: "1" if session.guest else "0",
            serving_policy.ENV_ALLOW_CODE: "1" if opts.allow_code else "0",
            serving_policy.ENV_ALLOW_FILES: "1" if opts.allow_files else "0",
            serving_policy.ENV_MAX_RUNS: str(opts.max_runs),
            serving_policy.ENV_STATE_DIR: str(self.state_dir),
        }

    def session_command(self, session: Session) -> str:
        # textual-serve runs it through the shell; exec so that the app is the process it stops.
        app = shlex.join([sys.executable, "-m", "tui.browser.serve_session"])
        return f"cd {shlex.quote(str(session.data_dir))} && exec {app}"

    def shared_data_dir(self) -> Path:
        folder = self.options.data_dir
        if folder is None:
            from minigpt import paths

            folder = paths.user_data_dir()
        folder.mkdir(parents=True, exist_ok=True)
        return folder.resolve()

    def new_session(self) -> Session:
        if self.options.guest:
            folder = self.state_dir / "guests" / uuid.uuid4().hex[:12]
            folder.mkdir(parents=True)
            return Session(folder, guest=True)
        return Session(self.shared_data_dir(), guest=False)

    # -- request checks --------------------------------------------------------------------------
    def refusal(self, request: web.Request, websocket: bool) -> str | None:
        """Why this request must be refused, or None."""
        host = request.host or ""
        if not _HOST_HEADER.fullmatch(host):  # it is written into the page: a name and a port, nothing else
            return "This request's Host header is not a host name."
        hostname = urlsplit(f"//{host}").hostname or ""
        if not self.options.public and not is_loopback_name(hostname):
            return (f"This tutor is served on the loopback address only; {host!r} is not a name for it. "
                    f"Open it as http://127.0.0.1:{self.port}/ (or start it with --public).")
        origin = request.headers.get("Origin")
        if websocket and origin is not None:
            if urlsplit(origin).netloc.lower() != host.lower():
                return f"A page from {origin} may not open a session on this tutor."
        return None

    def full_message(self) -> str:
        n = self.options.max_sessions
        return (f"This tutor already has {n} browser session{'s' if n != 1 else ''} open, its limit "
                f"(minigpt serve --max-sessions). Close another tab of it, then press Restart.")

    # -- routes ----------------------------------------------------------------------------------
    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        reason = self.refusal(request, websocket=False)
        if reason:
            return web.Response(status=403, text=reason)
        if len(self.sessions) >= self.options.max_sessions:
            return web.Response(status=503, content_type="text/html",
                                text=f"<!DOCTYPE html><title>{html_escape(PAGE_TITLE)}</title>"
                                     f"<p>{html_escape(self.full_message())}</p>")
        # The page's websocket and static URLs: the address the browser used (0.0.0.0 is not one).
        self.public_url = f"{request.scheme}://{request.host}"
        response = await super().handle_index(request)
        head = (f"<head>\n    <title>{html_escape(PAGE_TITLE)}</title>\n"
                f"    <style>@font-face {{ font-family: 'Roboto Mono'; "
                f"src: url('/static/fonts/RobotoMono-VariableFont_wght.ttf'); }}</style>")
        response.text = _FONT_LINK.sub("", response.text.replace("<head>", head, 1))
        return response

    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
        reason = self.refusal(request, websocket=True)
        if reason:
            log.warning("refused a session: %s", reason)
            return web.Response(status=403, text=reason)
        websocket = web.WebSocketResponse(heartbeat=15)
        await websocket.prepare(request)
        if len(self.sessions) >= self.options.max_sessions:
            await self._say_full(websocket)
            return websocket
        width = terminal_side(request.query.get("width"), 80)
        height = terminal_side(request.query.get("height"), 24)
        session = self.new_session()
        self.sessions[session.id] = session
        service = SessionService(
            self.session_command(session), extra_env=self.session_env(session),
            write_bytes=websocket.send_bytes, write_str=websocket.send_str, close=websocket.close,
            download_manager=self.download_manager, debug=self.debug)
        try:
            await service.start(width, height)
            try:
                await self._process_messages(websocket, service)
            finally:
                # The tab is gone: its slot is free now, not once its app is reaped (up to
                # STOP_TIMEOUT_S later), so a tab opened meanwhile is not refused as over the limit.
                self.sessions.pop(session.id, None)
                await service.stop_and_reap(STOP_TIMEOUT_S)
        except asyncio.CancelledError:
            await websocket.close()
        except Exception as e:  # one line: a traceback on the server's console helps nobody
            log.error("session %s ended with an error: %s: %s", session.id, type(e).__name__, printable(str(e)))
        finally:
            self.sessions.pop(session.id, None)
            if session.guest:
                # Its own task: a cancelled handler (server shutdown) must not cut the cleanup short.
                task = asyncio.create_task(asyncio.to_thread(end_guest_session, session.data_dir))
                self._cleanups.add(task)
                task.add_done_callback(self._cleanups.discard)
        return websocket

    async def _process_messages(self, websocket: web.WebSocketResponse, app_service: AppService) -> None:
        """textual-serve's relay, with every frame checked: a malformed one (not JSON, not a list,
        an unknown kind, a resize without whole numbers) is one log line and is dropped; the
        session goes on (textual-serve's own relay raised, logged a traceback and ended the tab)."""
        async for message in websocket:
            if message.type != WSMsgType.TEXT:
                continue
            frame = parse_frame(message.data)
            if isinstance(frame, str):
                log.warning("ignored a malformed websocket frame: %s", frame)
                continue
            kind, data = frame
            if kind == "stdin":
                await app_service.send_bytes(data.encode("utf-8", "replace"))
            elif kind == "resize":
                await app_service.set_terminal_size(*data)
            elif kind == "ping":
                await websocket.send_json(["pong", data])
            elif kind == "blur":
                await app_service.blur()
            elif kind == "focus":
                await app_service.focus()

    async def _say_full(self, websocket: web.WebSocketResponse) -> None:
        """Write the limit message into the tab's terminal; close when it leaves or after a while."""
        text = "\x1b[2J\x1b[H\x1b[1mminigpt-tutor\x1b[0m\r\n\r\n" + self.full_message() + "\r\n"
        await websocket.send_bytes(text.encode("utf-8"))

        async def drain() -> None:
            async for _ in websocket:
                pass

        try:
            await asyncio.wait_for(drain(), FULL_MESSAGE_S)
        except TimeoutError:
            pass
        await websocket.close()

    # -- lifecycle -------------------------------------------------------------------------------
    async def on_startup(self, app: web.Application) -> None:
        opts = self.options
        shown_host = f"[{opts.host}]" if ":" in opts.host else opts.host
        lines = [f"minigpt-tutor served on http://{shown_host}:{opts.port}/  (Ctrl+C stops the server)"]
        if opts.guest:
            lines.append("guest mode: each tab gets a fresh data folder, removed (runs stopped) when it closes")
        else:
            lines.append(f"data folder: {self.shared_data_dir()} (shared by every tab)")
        lines.append("code: lesson snippets as written" + (", edited code allowed (--allow-code)"
                                                           if opts.allow_code else " (edited code needs --allow-code)"))
        lines.append("files: " + ("anywhere this user can reach (--allow-files)" if opts.allow_files
                                  else "the data folder and bundled content only (others need --allow-files)"))
        lines.append(f"limits: {opts.max_sessions} sessions, {opts.max_runs} training run(s) at a time")
        self.console.print("\n".join(lines), highlight=False, markup=False)

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.on_cleanup.append(self._remove_state)
        return app

    async def _remove_state(self, app: web.Application) -> None:
        if self._cleanups:
            await asyncio.gather(*self._cleanups, return_exceptions=True)
        guests = self.state_dir / "guests"
        if guests.is_dir():  # tabs still open when the server stopped
            for folder in guests.iterdir():
                await asyncio.to_thread(end_guest_session, folder)
        shutil.rmtree(self.state_dir, ignore_errors=True)


FRAME_KINDS = ("stdin", "resize", "ping", "blur", "focus")
MAX_TERMINAL_SIDE = 1000  # columns or rows: xterm.js in any real window asks for far fewer


def terminal_side(text: str | None, default: int) -> int:
    """A width or height from the page's URL: a whole number clamped to 1..MAX_TERMINAL_SIDE, or
    ``default`` when it is not a number (``?width=1e9`` would size a pty past what any screen holds)."""
    try:
        value = int(str(text).strip()[:12])
    except ValueError:
        return default
    return min(max(value, 1), MAX_TERMINAL_SIDE)


def parse_frame(text: str) -> tuple[str, object] | str:
    """A browser's frame as (kind, data), or why it is malformed (short, printable: for the log).

    The page sends ``["stdin", text]``, ``["resize", {"width": w, "height": h}]``, ``["ping", x]``,
    ``["blur"]`` and ``["focus"]``; a resize's data comes back as (width, height)."""
    shown = ascii(text[:60]) + ("…" if len(text) > 60 else "")
    try:
        envelope = json.loads(text)
    except (ValueError, RecursionError):
        return f"not JSON: {shown}"
    if not isinstance(envelope, list) or not envelope or envelope[0] not in FRAME_KINDS:
        return f"not a [kind, data] list of a known kind: {shown}"
    kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
    if kind == "stdin" and not isinstance(data, str):
        return f"stdin without text: {shown}"
    if kind == "resize":
        sides = [data.get(side) for side in ("width", "height")] if isinstance(data, dict) else [None]
        if not all(isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= MAX_TERMINAL_SIDE for v in sides):
            return f"resize without a width and height from 1 to {MAX_TERMINAL_SIDE}: {shown}"
        data = tuple(sides)
    return kind, data


def end_guest_session(data_dir: Path) -> None:
    """Stop the runs a guest started (nothing could reattach to them), then remove its folder."""
    try:
        serving_policy.stop_runs_in(data_dir)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
