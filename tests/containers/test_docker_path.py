"""The Docker install, for real, with podman: the release's Dockerfile built, its compose.yaml
brought up (PostgreSQL, migrate, the api, two workers, Caddy with its own certificate
authority) on stand-in base images made from Debian packages, and then update.sh moving it to
a new build and back. What differs from Docker and from the real images: docs/docker.md.

The install is a release of the committed HEAD (scripts/release.sh in a clone), unpacked with
an .env like install.sh's. The simulated Telegram runs on this machine, on the install's
network gateway (where containers reach the host); Caddy and the api are published on
loopback ports only.
"""

from __future__ import annotations

import asyncio
import re
import secrets
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from sponsorbot.simulator.client import SimulatorClient
from tests.containers.kit import (
    IMAGE_UID,
    ComposeInstall,
    free_subnet,
    make_release,
    missing_tools,
    podman,
    standin_images,
    wait_until,
)
from tests.processes import clean_environ, free_port, said, start

MISSING = missing_tools()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.external,
    pytest.mark.docker,
    pytest.mark.skipif(
        MISSING is not None, reason=f"the Docker path cannot be run here: {MISSING}"
    ),
    # One install at a time, and its tests in order on one worker: they share it.
    pytest.mark.xdist_group("docker_path"),
    pytest.mark.timeout(600),
]


class Stack:
    """The running install, the simulator in front of it, and Caddy's root certificate."""

    def __init__(self, install: ComposeInstall, root_ca: Path, sim: subprocess.Popen[bytes]):
        self.install = install
        self.root_ca = root_ca
        self.sim = sim

    @property
    def sim_url(self) -> str:
        """The simulator's address, as the containers and this process reach it."""
        return f"http://{self.install.gateway}:{self.install.sim_port}"

    def https(self) -> httpx.Client:
        """A client of the public address that trusts Caddy's own authority only."""
        context = ssl.create_default_context(cafile=str(self.root_ca))
        return httpx.Client(base_url=self.install.url, verify=context, timeout=20)


def _bring_up(install: ComposeInstall) -> None:
    """compose.yaml's start order, with its health checks run by hand: podman 4.3 has no
    `wait --condition=healthy`, so podman-compose would start everything at once."""
    install.compose("up", "-d", "--no-deps", "db")
    install.wait_healthy("db", 90)
    install.compose("up", "-d", "--no-deps", "migrate")
    podman("wait", install.name("migrate"), timeout=120)
    workers = install.env["SPONSORBOT_WORKERS"]
    install.compose("up", "-d", "--no-deps", "--scale", f"worker={workers}", "api", "worker")
    install.wait_healthy("api", 120)
    install.compose("up", "-d", "--no-deps", "caddy")
    install.wait_healthy("caddy", 60)


def _first_https(install: ComposeInstall) -> None:
    """Until Caddy answers over TLS (it issues its certificate on the first handshake)."""

    def answers() -> bool:
        # Not verified yet: Caddy's authority is read from its volume once it exists, and
        # every request after this one is checked against it.
        try:
            answer = httpx.get(f"{install.url}/healthz", verify=False, timeout=5)  # noqa: S501
            return answer.status_code == 200
        except httpx.HTTPError:
            return False

    wait_until(answers, 60, lambda: install.logs(install.name("caddy"))[-3000:])


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """A Docker install of HEAD's release, up and answering through Caddy."""
    home = tmp_path_factory.mktemp("docker")
    install = ComposeInstall(
        directory=home / "sponsorbot",
        project=f"sbtest{secrets.token_hex(3)}",
        subnet=free_subnet(),
        api_port=free_port(),
        https_port=free_port(),
        http_port=free_port(),
        sim_port=free_port(),
        images=standin_images(),
    )
    sim: subprocess.Popen[bytes] | None = None
    try:
        version = install.unpack(make_release(home / "repo", _head_version()))
        (install.directory / ".installed-version").write_text(f"{version}\n")
        install.write_env()
        # One service: the three that run the image share it, and podman-compose would build
        # it three times at once.
        install.compose("build", "api", timeout=420)
        _bring_up(install)
        _first_https(install)
        root_ca = home / "caddy-root.crt"
        root_ca.write_text(
            install.exec(install.name("caddy"), "cat", "/data/caddy/pki/authorities/local/root.crt")
        )
        # The simulator delivers webhooks over https: Caddy's authority is the one it trusts.
        env = clean_environ(SSL_CERT_FILE=str(root_ca))
        sim = start("simulator", "--host", install.gateway, "--port", str(install.sim_port),
                    env=env, log=home / "simulator.log")  # fmt: skip
        yield Stack(install, root_ca, sim)
    finally:
        if sim is not None:
            sim.terminate()
            sim.wait(timeout=15)
        install.teardown()


def _head_version() -> str:
    from sponsorbot import __version__

    return __version__


def test_the_image_runs_as_uid_10001_and_migrate_ran_once_before_the_others(stack: Stack) -> None:
    install = stack.install
    user = podman("image", "inspect", "sponsorbot:local", "--format", "{{.Config.User}}")
    assert user.stdout.strip() == f"{IMAGE_UID}:{IMAGE_UID}"
    for name in (install.name("api"), install.name("worker", 1), install.name("worker", 2)):
        assert install.exec(name, "id", "-u").strip() == str(IMAGE_UID), name

    migrate = install.containers("migrate")
    assert len(migrate) == 1 and migrate[0]["ExitCode"] == 0, migrate
    applied = int(install.psql("SELECT count(*) FROM schema_migrations")[0])
    said_ = install.logs(install.name("migrate"))
    assert re.search(rf"applied {applied} migration\(s\)", said_), said_[-2000:]
    # The api and the workers found a current schema: none of them applied anything.
    for name in (install.name("api"), install.name("worker", 1), install.name("worker", 2)):
        assert "applying migration" not in install.logs(name), name


def test_caddy_serves_the_api_over_https_with_its_own_authority(stack: Stack) -> None:
    with stack.https() as client:
        health = client.get("/healthz")
        assert health.status_code == 200 and health.json()["status"] == "ok"
        assert "server" not in health.headers  # deploy/Caddyfile drops Caddy's name
        signin = client.get("/signin")
        assert signin.status_code == 200
        assert "max-age" in signin.headers.get("strict-transport-security", "")
    # The database is published nowhere, the api on loopback only.
    ports = podman("port", "--all").stdout
    assert str(stack.install.api_port) in ports and ":5432" not in ports


@pytest.fixture(scope="module")
async def bots(stack: Stack) -> list[dict[str, Any]]:
    """Two simulated bots, connected in webhook mode through the owner API (through Caddy)."""
    install = stack.install
    token = install.exec(install.name("api"), "sponsorbot", "token", "create", "--name", "docker")
    owner = {"Authorization": f"Bearer {token.split()[-1]}"}
    async with SimulatorClient(stack.sim_url) as sim:
        made = [await sim.create_bot(f"docker_{n}_bot") for n in (1, 2)]
    with stack.https() as client:
        for bot in made:
            added = client.post(
                "/api/v1/bots", json={"token": bot["token"], "mode": "webhook"}, headers=owner
            )
            assert added.status_code == 201, added.text
    return made


async def _answered(stack: Stack, bots: list[dict[str, Any]]) -> None:
    """A new person sends /start to each bot; each answers within 30 s."""
    async with SimulatorClient(stack.sim_url) as sim:
        person = await sim.create_user("Dana")
        async with httpx.AsyncClient(timeout=10) as plain:
            for bot in bots:
                info = await plain.get(sim.api_url(bot["token"], "getWebhookInfo"))
                hook = info.json()["result"]
                assert hook["url"].startswith(f"{stack.install.url}/tg/"), hook
        for bot in bots:
            await sim.send_text(person["id"], bot["username"], "/start")
        answered: dict[str, list[str]] = {}
        for _ in range(60):
            for bot in bots:
                chat = await sim.read_chat(person["id"], bot["username"])
                answered[bot["username"]] = [m.get("text", "") for m in chat if m["from"] == "bot"]
            if all(answered.values()):
                return
            await asyncio.sleep(0.5)
    raise AssertionError((answered, said(stack.sim)))


def _workers_share(install: ComposeInstall) -> None:
    """Each running worker holds the sender of one bot (its lease owner starts with its host
    name, the container's short id): the work is shared, not held by one of them."""
    hosts = {str(c["Id"])[:12] for c in install.containers("worker") if c["State"] == "running"}
    senders = "SELECT owner FROM leases WHERE name LIKE 'send:%' AND expires_at > now()"

    def shared() -> bool:
        owners = install.psql(senders)
        return len(hosts) == 2 and {o.split(":")[0] for o in owners} == hosts

    wait_until(shared, 60, lambda: f"senders {install.psql(senders)}, workers {hosts}")


async def test_webhook_updates_through_caddy_are_answered_and_two_workers_share_the_bots(
    stack: Stack, bots: list[dict[str, Any]]
) -> None:
    await _answered(stack, bots)
    _workers_share(stack.install)


def _image_id(name: str) -> str:
    return podman("image", "inspect", "--format", "{{.Id}}", name).stdout.strip()


def _running_version(stack: Stack) -> str:
    with stack.https() as client:
        version: str = client.get("/healthz").json()["version"]
    return version


async def test_update_sh_moves_the_install_to_a_new_build_and_back(
    stack: Stack, bots: list[dict[str, Any]], tmp_path: Path
) -> None:
    install = stack.install
    old = _running_version(stack)
    old_image = _image_id("sponsorbot:local")
    old_workers = {str(c["Id"]) for c in install.containers("worker")}
    new = f"{old}.1"
    release = make_release(install.directory.parent / "repo", new)
    bin_dir = tmp_path / "bin"

    # Stand-ins cannot be pulled: the build uses the images this machine has.
    out = install.update("--release", str(release), "--no-pull", bin_dir=bin_dir)
    assert f"updated: Sponsorbot {new} runs" in out, out[-4000:]
    assert _running_version(stack) == new
    assert (install.directory / ".installed-version").read_text().strip() == new
    assert _image_id("sponsorbot:previous") == old_image != _image_id("sponsorbot:local")
    running = {str(c["Id"]) for c in install.containers("worker") if c["State"] == "running"}
    assert len(running) == 2 and not running & old_workers, (running, old_workers)
    backups = list((install.directory / "backups").glob(f"sponsorbot-{old}-before-update-*.tar"))
    assert len(backups) == 1, out[-4000:]
    await _answered(stack, bots)
    _workers_share(install)

    out = install.update("--rollback", bin_dir=bin_dir)
    assert _running_version(stack) == old, out[-4000:]
    assert (install.directory / ".installed-version").read_text().strip() == old
    assert _image_id("sponsorbot:local") == old_image
    await _answered(stack, bots)
    _workers_share(install)
