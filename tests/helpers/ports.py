"""Loopback ports for tests that start servers in other processes, from one allocator that
cannot hand the same port out twice.

Binding port 0 and closing the socket leaves a window in which another test (or another helper's
suite on the same machine) gets the same port. Here a port is leased: an exclusive lock on a file
named after it, held until the lease is released or this process ends, and taken only if the port
can be bound right now. The range sits below Linux's ephemeral ports (32768 and up), so the
kernel never picks one of these for an outgoing connection either.
"""

from __future__ import annotations

import fcntl
import os
import random
import socket
import tempfile
from pathlib import Path

PORTS = range(20000, 32000)
LOCK_DIR = Path(tempfile.gettempdir()) / "minigpt-test-ports"
_leases: dict[int, int] = {}  # port -> file descriptor holding its lock


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A loopback port no other test holds and nothing listens on; kept until ``release``."""
    LOCK_DIR.mkdir(exist_ok=True)
    for port in random.sample(PORTS, len(PORTS)):
        if port in _leases:
            continue
        fd = os.open(LOCK_DIR / f"{port}.lock", os.O_CREAT | os.O_RDWR, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        if _bindable(port):
            _leases[port] = fd
            return port
        os.close(fd)  # closing releases the lock
    raise RuntimeError("no free loopback port to lease")


def release(port: int) -> None:
    fd = _leases.pop(port, None)
    if fd is not None:
        os.close(fd)
