"""Malformed websocket frames sent to `minigpt serve`: one log line each, no traceback, the session
goes on, and a closed tab's slot is free at once (not once its app is reaped)."""

from __future__ import annotations

import time

import aiohttp
import pytest

from tests.browser.harness import ServedTutor
from tests.helpers.serving import APP_FRAME, receive_until
from tui.browser.serve_server import parse_frame

BAD_FRAMES = [
    '["stdin", 12345]',                              # the sweep's four
    "hello{",
    '{"a":1}',
    '["resize", {"width": "wide", "height": 24}]',
    "[]",                                            # not tried by the sweep
    '["resize", {"width": 10000000, "height": 24}]',
    '["resize", {"width": true, "height": 24}]',
    '["resize", [80, 24]]',
    '["exec", "rm -rf /"]',
    "[" * 100_000,                                   # deep enough to break a recursive parser
    '"\\u001b]52;c;cHduZWQ=\\u0007"',                # a bare string carrying a terminal sequence
]


@pytest.mark.parametrize("frame", BAD_FRAMES)
def test_each_malformed_frame_is_named_not_raised(frame):
    reason = parse_frame(frame)
    assert isinstance(reason, str) and len(reason) < 200 and "\x1b" not in reason


def test_good_frames_pass():
    assert parse_frame('["stdin", "ab\\u00e9"]') == ("stdin", "ab\u00e9")
    assert parse_frame('["resize", {"width": 80, "height": 24}]') == ("resize", (80, 24))
    assert parse_frame('["ping", "1"]') == ("ping", "1")
    assert parse_frame('["focus"]') == ("focus", None)


async def test_bad_frames_are_logged_once_each_and_the_slot_is_freed_at_once(tmp_path):
    log_path = tmp_path / "serve.log"
    with ServedTutor(tmp_path / "data", "--max-sessions", "1", log_path=log_path) as server:
        url, origin = f"ws://127.0.0.1:{server.port}/ws", f"http://127.0.0.1:{server.port}"
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(url, origin=origin, max_msg_size=0) as tab:
                await receive_until(tab, APP_FRAME)
                for frame in BAD_FRAMES:
                    await tab.send_str(frame)
                await tab.send_str('["ping", "still here"]')  # the session goes on
                deadline = time.monotonic() + 20
                pong = None
                while pong is None and time.monotonic() < deadline:
                    msg = await tab.receive(timeout=20)
                    if msg.type == aiohttp.WSMsgType.TEXT and "pong" in msg.data:
                        pong = msg.json()
                assert pong == ["pong", "still here"]
            # the tab closed: the next one gets an app at once, not the over-the-limit message
            async with http.ws_connect(url, origin=origin) as next_tab:
                seen = await receive_until(next_tab, APP_FRAME)
                assert b"already has 1 browser session" not in seen
    text = log_path.read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in text
    assert text.count("ignored a malformed websocket frame") == len(BAD_FRAMES)
