"""``minigpt serve`` without a browser: the command's refusals, and the server's checks over HTTP
and websockets (the same protocol textual-serve's page speaks)."""

from __future__ import annotations

import asyncio
import http.client
import time
from pathlib import Path

import aiohttp
import pytest
from click.testing import CliRunner

from tests.browser.harness import ServedTutor
from tests.helpers.serving import APP_FRAME, receive_until
from tests.helpers.waiting import wait_until as _wait_until
from tui.browser.serve import is_loopback_host, public_warning
from tui.browser.serve_server import PAGE_TITLE, is_loopback_name
from tui.cli import main


@pytest.mark.parametrize("host", ["127.0.0.1", "127.3.4.5", "::1", "[::1]", "localhost"])
def test_loopback_hosts_are_served_without_public(host):
    assert is_loopback_host(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.1.2.3", "192.168.0.7", "example.invalid"])
def test_other_hosts_are_not_loopback(host):
    assert not is_loopback_host(host)


def test_a_public_host_is_refused_without_public():
    result = CliRunner().invoke(main, ["serve", "--host", "0.0.0.0", "--port", "9"])
    assert result.exit_code == 2
    assert "--public" in result.output and "Traceback" not in result.output


def test_the_public_warning_says_who_can_do_what():
    text = public_warning("0.0.0.0", 8000, allow_code=True, allow_files=False)
    assert "anyone who can reach 0.0.0.0:8000" in text and "start training runs" in text
    assert "--allow-code" in text and "--allow-files" not in text


def test_host_header_names_that_are_not_this_machine_are_refused():
    assert is_loopback_name("127.0.0.1") and is_loopback_name("localhost") and is_loopback_name("[::1]")
    assert not is_loopback_name("rebind.attacker.example") and not is_loopback_name("0.0.0.0")


def _get(port: int, host_header: str | None = None) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.putrequest("GET", "/", skip_host=host_header is not None)
    if host_header is not None:
        conn.putheader("Host", host_header)
    conn.endheaders()
    response = conn.getresponse()
    body = response.read().decode("utf-8", "replace")
    conn.close()
    return response.status, body


async def test_the_page_the_checks_and_the_session_limit(tmp_path):
    with ServedTutor(tmp_path / "data", "--max-sessions", "1", log_path=tmp_path / "serve.log") as server:
        port, origin = server.port, f"http://127.0.0.1:{server.port}"
        status, page = _get(port)
        assert status == 200 and f"<title>{PAGE_TITLE}</title>" in page
        assert "fonts.googleapis.com" not in page and "@font-face" in page  # nothing asked of a third party

        status, body = _get(port, host_header=f"rebind.attacker.example:{port}")
        assert status == 403 and "loopback" in body
        status, body = _get(port, host_header="127.0.0.1:1');}</style><script>alert(1)</script>")
        assert status in (400, 403) and "<script>" not in body

        async with aiohttp.ClientSession() as http:
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await http.ws_connect(f"ws://127.0.0.1:{port}/ws", origin="http://attacker.example")
            assert refused.value.status == 403

            async with http.ws_connect(f"ws://127.0.0.1:{port}/ws?width=100&height=30", origin=origin) as first:
                await receive_until(first, APP_FRAME)
                status, body = _get(port)
                assert status == 503 and "limit" in body
                async with http.ws_connect(f"ws://127.0.0.1:{port}/ws", origin=origin) as second:
                    said = await receive_until(second, b"--max-sessions")
                    assert b"already has 1 browser session open" in said
            _wait_until(lambda: _get(port)[0] == 200, 20, "the closed tab's slot is free again")


def _guest_folders(tmp: Path) -> list[Path]:
    return sorted(tmp.glob("minigpt-serve-*/guests/*"))


def _session_processes(server: ServedTutor) -> list[int]:
    """The server's child processes: one app per open tab."""
    children = Path(f"/proc/{server.process.pid}/task/{server.process.pid}/children")
    return [int(pid) for pid in children.read_text().split()]


async def test_guest_tabs_get_their_own_folder_removed_when_they_close(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    server = ServedTutor(None, "--guest", log_path=tmp_path / "serve.log", env={"TMPDIR": str(tmp)}).start()
    try:
        origin = f"http://127.0.0.1:{server.port}"
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(f"ws://127.0.0.1:{server.port}/ws", origin=origin) as one, \
                    http.ws_connect(f"ws://127.0.0.1:{server.port}/ws", origin=origin) as two:
                await asyncio.gather(receive_until(one, APP_FRAME), receive_until(two, APP_FRAME))
                folders = _guest_folders(tmp)
                assert len(folders) == 2  # one per tab, nothing shared
                assert all((f / "progress.sqlite3").exists() for f in folders)
                assert len(_session_processes(server)) == 2
            _wait_until(lambda: not _guest_folders(tmp), 30, "guest folders removed after their tabs closed")
            # Removed only once its app had exited: an app left running (textual-serve stops reading
            # it when a write to the closed tab fails) wrote its log and runs folder back into it.
            assert _session_processes(server) == []
            time.sleep(1.0)
            assert not _guest_folders(tmp), "a guest folder came back after it was removed"
            async with http.ws_connect(f"ws://127.0.0.1:{server.port}/ws", origin=origin) as open_tab:
                await receive_until(open_tab, APP_FRAME)
                assert len(_guest_folders(tmp)) == 1
                assert server.stop() is not None  # stopped while a guest tab is still open
    finally:
        server.stop()
    assert not list(tmp.glob("minigpt-serve-*")), "the server's state folder outlived it"
