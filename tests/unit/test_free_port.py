"""free_port: ports a server can bind later, out of the way of outgoing connections."""

from __future__ import annotations

import random
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from sponsorbot import ports as portlib


@pytest.fixture
def port_range(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A stand-in for the kernel's ephemeral range file, and a fresh record of ports given."""
    file = tmp_path / "ip_local_port_range"
    monkeypatch.setattr(portlib, "_EPHEMERAL_RANGE", file)
    monkeypatch.setattr(portlib, "_handed_out", set())
    yield file


def test_ports_lie_below_the_ephemeral_range_and_are_never_repeated(port_range: Path) -> None:
    port_range.write_text("32768\t60999\n")
    ports = [portlib.free_port() for _ in range(300)]
    assert len(set(ports)) == len(ports)
    assert all(32768 - 10_000 <= p < 32768 for p in ports)


def test_a_port_someone_listens_on_is_skipped(
    port_range: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port_range.write_text("32768 60999")
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        taken = held.getsockname()[1]
        port_range.write_text(f"{taken + 1} 60999")
        picks = iter([taken, taken - 1])
        monkeypatch.setattr(random, "randrange", lambda a, b: next(picks))
        if not portlib._bindable(taken - 1):
            pytest.skip("the port beside the held one is busy on this machine")
        assert portlib.free_port() == taken - 1


@pytest.mark.parametrize("content", [None, "", "garbage", "5000 60999"])
def test_without_a_usable_range_the_kernel_picks(port_range: Path, content: str | None) -> None:
    if content is not None:
        port_range.write_text(content)
    ports = {portlib.free_port() for _ in range(20)}
    assert len(ports) == 20
    for port in ports:
        assert portlib._bindable(port)


@pytest.mark.parametrize(
    ("worker", "count", "first", "last"), [("gw0", "2", 22768, 27768), ("gw1", "2", 27768, 32768)]
)
def test_parallel_test_workers_draw_from_slices_of_their_own(
    port_range: Path,
    monkeypatch: pytest.MonkeyPatch,
    worker: str,
    count: str,
    first: int,
    last: int,
) -> None:
    port_range.write_text("32768 60999")
    monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", count)
    ports = [portlib.free_port() for _ in range(200)]
    assert all(first <= p < last for p in ports)


@pytest.mark.parametrize(("worker", "count"), [("master", "2"), ("gw3", "2"), ("gw0", "x")])
def test_a_worker_name_that_makes_no_slice_uses_the_whole_range(
    port_range: Path, monkeypatch: pytest.MonkeyPatch, worker: str, count: str
) -> None:
    port_range.write_text("32768 60999")
    monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", count)
    assert portlib._share(22768, 32768) == (22768, 32768)
