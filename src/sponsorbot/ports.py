"""Loopback ports a server can bind a moment later: for the demo, the load test, the local
Citus cluster and the tests. A leaf module, so every layer may use it."""

from __future__ import annotations

import os
import random
import socket
from pathlib import Path

# Where the kernel takes the source ports of outgoing connections from.
_EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
# How far below that range free_port looks.
_BELOW_EPHEMERAL = 10_000
_handed_out: set[int] = set()


def _ephemeral_low() -> int | None:
    try:
        return int(_EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _share(first: int, last: int) -> tuple[int, int]:
    """This process's slice of [first, last) when a parallel test run names its workers.

    pytest-xdist sets PYTEST_XDIST_WORKER (gw0, gw1, ...) and PYTEST_XDIST_WORKER_COUNT in
    each worker and the processes it starts; two workers then never pick the same port.
    """
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    try:
        index = int(worker.removeprefix("gw"))
        count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", ""))
    except ValueError:
        return first, last
    if not 0 <= index < count:
        return first, last
    size = (last - first) // count
    return first + index * size, first + (index + 1) * size


def free_port() -> int:
    """A loopback port nobody listens on right now, never the same one twice in a process.

    It lies below the kernel's ephemeral range where the kernel says what that is. A port
    from bind(0) lies inside it, and between this answer and the server's own bind any
    outgoing connection (a health poll, a database client, another test) may take it as its
    source port, and the server then fails to start. Below the range, only a bind that
    names the port takes it.
    """
    low = _ephemeral_low()
    if low is not None and low - _BELOW_EPHEMERAL >= 1024:
        first, last = _share(low - _BELOW_EPHEMERAL, low)
        for _ in range(100):
            port = random.randrange(first, last)
            if port not in _handed_out and _bindable(port):
                _handed_out.add(port)
                return port
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port not in _handed_out:
            _handed_out.add(port)
            return port
