"""Reading what a served tutor sends: the home screen's first frame, and a websocket read until a
given text arrives (bounded)."""

from __future__ import annotations

import time

import aiohttp

APP_FRAME = b"Learn how GPT works"  # on the home screen's first frame


async def receive_until(ws, needle: bytes, timeout: float = 30.0) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while needle not in seen:
        msg = await ws.receive(timeout=max(0.1, deadline - time.monotonic()))
        if msg.type == aiohttp.WSMsgType.BINARY:
            seen += msg.data
        elif msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
            break
    assert needle in seen, seen[-500:]
    return seen
