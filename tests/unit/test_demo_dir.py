"""The demo claims only a directory it made, and never removes anything else."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sponsorbot.cli import app
from sponsorbot.demo.runner import (
    MARKER,
    STATE_FILE,
    DemoError,
    Options,
    _check_ports,
    claim_dir,
)
from tests.processes import free_port


def test_a_new_directory_is_made_and_marked(tmp_path: Path) -> None:
    target = tmp_path / "new" / "demo"
    claim_dir(target)
    assert (target / MARKER).is_file()


def test_an_empty_directory_is_marked(tmp_path: Path) -> None:
    claim_dir(tmp_path)
    assert (tmp_path / MARKER).is_file()


def test_a_directory_with_other_files_is_refused_untouched(tmp_path: Path) -> None:
    (tmp_path / "pgdata").mkdir()
    (tmp_path / "secret.key").write_text("not the demo's")
    with pytest.raises(DemoError, match="did not make"):
        claim_dir(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pgdata", "secret.key"]


def test_a_demo_directory_from_before_the_marker_is_adopted(tmp_path: Path) -> None:
    (tmp_path / "pgdata").mkdir()
    (tmp_path / STATE_FILE).write_text(json.dumps({"world": "x"}))
    claim_dir(tmp_path)
    assert (tmp_path / MARKER).is_file()


def test_an_old_looking_directory_with_anything_else_is_refused(tmp_path: Path) -> None:
    (tmp_path / STATE_FILE).write_text("{}")
    (tmp_path / "backups").mkdir()
    with pytest.raises(DemoError):
        claim_dir(tmp_path)
    assert not (tmp_path / MARKER).exists()


def test_a_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(DemoError, match="not a directory"):
        claim_dir(target)


@pytest.mark.parametrize("reset", [False, True])
def test_the_command_refuses_an_installation_and_deletes_nothing(
    tmp_path: Path, reset: bool
) -> None:
    """`sponsorbot demo --data-dir /var/lib/sponsorbot` must never wipe an installation."""
    install = tmp_path / "installation"
    (install / "pgdata").mkdir(parents=True)
    (install / "pgdata" / "PG_VERSION").write_text("18\n")
    (install / "secret.key").write_text("key")
    (install / "backups").mkdir()
    before = sorted(str(p.relative_to(install)) for p in install.rglob("*"))
    args = ["demo", "--data-dir", str(install), "--port", str(free_port())]
    args += ["--sim-port", str(free_port())] + (["--reset"] if reset else [])
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1
    assert "did not make" in result.output
    assert sorted(str(p.relative_to(install)) for p in install.rglob("*")) == before
    assert not list(tmp_path.glob(".*.lock"))


def test_a_port_in_use_is_refused_and_one_just_closed_is_not() -> None:
    """A listener is refused; a port whose last connection waits out TIME_WAIT (a demo just
    stopped) is free, as the servers themselves bind it."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    other = free_port()
    with pytest.raises(DemoError, match=f"port {port} is taken; choose another with --port"):
        _check_ports(Options(Path("/nonexistent"), port, other))
    client = socket.create_connection(("127.0.0.1", port))
    accepted, _ = listener.accept()
    accepted.close()  # the server's side closes first: its port waits in TIME_WAIT
    listener.close()
    client.close()
    _check_ports(Options(Path("/nonexistent"), port, other))
