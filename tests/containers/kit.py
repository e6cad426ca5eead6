"""Podman in place of Docker, for the test of the Docker path (docs/docker.md).

A compose install is a release unpacked into a directory with an .env like install.sh's, run by
podman-compose with the runtime settings this kind of machine needs (podman.conf beside this
file). Every container, network and volume of one install carries its own project name, so two
runs never meet, and `teardown` removes them all whatever state they are in.
"""

from __future__ import annotations

import ipaddress
import json
import os
import random
import secrets
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PODMAN_CONF = HERE / "podman.conf"
# The image uid the Dockerfile gives the product (and install.sh the backups directory).
IMAGE_UID = 10001
# The host's TLS authorities and pip settings, lent to the image build (read-only) so that pip
# reaches the package index through whatever this machine needs; absent ones are skipped.
BUILD_MOUNTS = ("/etc/ssl/certs", "/etc/pip.conf")


def missing_tools() -> str | None:
    """Why the Docker-path test cannot run here, or None."""
    if os.geteuid() != 0:
        return "it runs as root (podman's bridge networks, update.sh, files owned by uid 10001)"
    for tool, package in (("podman", "podman"), ("runc", "runc"), ("mmdebstrap", "mmdebstrap")):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (apt-get install {package})"
    if _compose_command() is None:
        return "podman-compose is not installed (pip install -e '.[test]')"
    return None


def _compose_command() -> list[str] | None:
    # The venv's own, when the tests run from it without activating it.
    path = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"
    found = shutil.which("podman-compose", path=path)
    return [found] if found else None


def podman_environ() -> dict[str, str]:
    """This process's environment with podman's settings for this machine."""
    return {**os.environ, "CONTAINERS_CONF": str(PODMAN_CONF)}


def run(
    args: list[str],
    timeout: float,
    cwd: Path | None = None,
    check: bool = True,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """A command with podman's settings; a failure shows everything it printed."""
    result = subprocess.run(
        args, cwd=cwd, env=env or podman_environ(), capture_output=True, text=True,
        timeout=timeout, check=False,
    )  # fmt: skip
    if check and result.returncode != 0:
        raise AssertionError(
            f"{' '.join(args)} exited with {result.returncode}:\n"
            f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        )
    return result


def podman(*args: str, timeout: float = 60, check: bool = True) -> subprocess.CompletedProcess[str]:
    """`podman ARGS`."""
    return run(["podman", *args], timeout=timeout, check=check)


def standin_images() -> dict[str, str]:
    """PYTHON_IMAGE, POSTGRES_IMAGE and CADDY_IMAGE: the stand-ins, built if missing."""
    out = run(["bash", str(HERE / "standins.sh")], timeout=600).stdout
    return dict(line.split("=", 1) for line in out.split() if "=" in line)


def build_args() -> list[str]:
    """podman-compose's extra `podman build` arguments for this machine."""
    mounts = [f"-v {p}:{p}:ro" for p in BUILD_MOUNTS if os.path.exists(p)]
    return [f"--podman-build-args=--network=host {' '.join(mounts)}"]


def free_subnet() -> str:
    """A /24 in 10.0.0.0/8 that no podman network and no address of this machine is in."""
    taken = []
    for name in podman("network", "ls", "--format", "{{.Name}}").stdout.split():
        info = json.loads(podman("network", "inspect", name).stdout)
        for net in info:
            taken += [s["subnet"] for s in net.get("subnets", [])]
    addresses = run(["ip", "-o", "-4", "addr"], timeout=10).stdout
    taken += [w for w in addresses.split() if "/" in w and w[0].isdigit()]
    nets = [ipaddress.ip_network(t, strict=False) for t in taken]
    while True:
        candidate = ipaddress.ip_network(
            f"10.{random.randint(100, 254)}.{random.randint(0, 255)}.0/24"
        )
        if not any(candidate.overlaps(n) for n in nets):
            return str(candidate)


def make_release(repo_copy: Path, version: str) -> Path:
    """scripts/release.sh run in a clone of HEAD whose __version__ is VERSION (committed)."""
    if not repo_copy.exists():
        run(["git", "clone", "-q", "--depth", "1", f"file://{REPO}", str(repo_copy)], timeout=120)
    init = repo_copy / "src" / "sponsorbot" / "__init__.py"
    text = init.read_text()
    current = text.split('__version__ = "', 1)[1].split('"', 1)[0]
    if current != version:
        init.write_text(text.replace(f'__version__ = "{current}"', f'__version__ = "{version}"'))
        ident = ["-c", "user.name=test", "-c", "user.email=test@example.com"]
        run(["git", *ident, "commit", "-q", "-am", f"version {version}"], timeout=60, cwd=repo_copy)
    # A Docker install builds its image from PyPI (or a mirror), not from the release's wheels.
    command = [str(repo_copy / "scripts" / "release.sh"), "--no-wheels"]
    out = run(command, timeout=300, cwd=repo_copy).stdout
    return repo_copy / out.split()[0]


@dataclass
class ComposeInstall:
    """One Docker install of Sponsorbot in DIRECTORY, run with podman under PROJECT."""

    directory: Path
    project: str
    subnet: str
    api_port: int
    https_port: int
    http_port: int
    sim_port: int
    images: dict[str, str]
    env: dict[str, str] = field(default_factory=dict)

    @property
    def gateway(self) -> str:
        """The host's address on the install's network: containers reach the host there."""
        return str(next(ipaddress.ip_network(self.subnet).hosts()))

    @property
    def url(self) -> str:
        """The public address: Caddy, published on this machine's loopback."""
        return f"https://localhost:{self.https_port}"

    def unpack(self, archive: Path) -> str:
        """Put a release in place as install.sh does (its tree, a backups directory for the
        image's user); returns its version."""
        with tarfile.open(archive) as tar:
            top = tar.getnames()[0].split("/")[0]
            tar.extractall(self.directory.parent / "unpacked", filter="tar")
        unpacked = self.directory.parent / "unpacked"
        shutil.copytree(unpacked / top, self.directory, dirs_exist_ok=True)
        shutil.rmtree(unpacked)
        backups = self.directory / "backups"
        backups.mkdir(mode=0o700, exist_ok=True)
        os.chown(backups, IMAGE_UID, IMAGE_UID)
        return top.removeprefix("sponsorbot-")

    def write_env(self) -> None:
        """install.sh's .env for a Docker install (its keys, fresh secrets), and what this
        machine needs: the stand-in images, Caddy and the api on loopback ports, a network
        of our own, the simulator as Telegram."""
        self.env = {
            "COMPOSE_PROJECT_NAME": self.project,
            "SPONSORBOT_DOMAIN": f"localhost:{self.https_port}",
            "SPONSORBOT_PANEL_URL": self.url,
            "SPONSORBOT_ACME_EMAIL": "owner@example.com",
            "SPONSORBOT_WORKERS": "2",
            "POSTGRES_PASSWORD": secrets.token_hex(24),
            "SPONSORBOT_SECRET_KEY": secrets.token_hex(32),
            "SPONSORBOT_METRICS_TOKEN": secrets.token_hex(24),
            "SPONSORBOT_API_PORT": str(self.api_port),
            "SPONSORBOT_SUBNET": self.subnet,
            "SPONSORBOT_HTTP_PUBLISH": f"127.0.0.1:{self.http_port}:80",
            "SPONSORBOT_HTTPS_PUBLISH": f"127.0.0.1:{self.https_port}:{self.https_port}",
            "SPONSORBOT_TELEGRAM_API": f"http://{self.gateway}:{self.sim_port}",
            **self.images,
        }
        path = self.directory / ".env"
        path.write_text("".join(f"{k}={v}\n" for k, v in self.env.items()))
        path.chmod(0o600)

    def compose(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """podman-compose ARGS in the install directory."""
        command = _compose_command()
        assert command is not None
        return run([*command, *build_args(), *args], timeout=timeout, cwd=self.directory)

    def update(self, *args: str, bin_dir: Path, timeout: float = 420) -> str:
        """The install's own update.sh with ARGS (and --yes), `docker` being podman (the shim
        docker-shim.sh, whose comment says where it does what podman-compose does not);
        returns what it printed."""
        bin_dir.mkdir(exist_ok=True)
        if not (bin_dir / "docker").exists():
            (bin_dir / "docker").symlink_to(HERE / "docker-shim.sh")
        command = _compose_command()
        assert command is not None
        env = {
            **podman_environ(),
            "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}",
            "PODMAN_COMPOSE": command[0],
            "PODMAN_BUILD_ARGS": build_args()[0].split("=", 1)[1],
            "SPONSORBOT_SETTLE_SECONDS": "2",
        }
        script = str(self.directory / "update.sh")
        command = [script, "--yes", "--dir", str(self.directory), *args]
        result = run(command, timeout=timeout, cwd=self.directory, env=env)
        return result.stdout + result.stderr

    def name(self, service: str, number: int = 1) -> str:
        """The container podman-compose names for a service's NUMBERth copy."""
        return f"{self.project}_{service}_{number}"

    def containers(self, service: str) -> list[dict[str, object]]:
        """`podman ps -a` of a service's containers, as JSON."""
        out = podman("ps", "-a", "--format", "json", "--filter",
                     f"label=io.podman.compose.project={self.project}", "--filter",
                     f"label=io.podman.compose.service={service}").stdout  # fmt: skip
        found: list[dict[str, object]] = json.loads(out or "[]")
        return found

    def logs(self, container: str) -> str:
        """What a container printed (both streams)."""
        result = podman("logs", container, check=False)
        return result.stdout + result.stderr

    def exec(self, container: str, *args: str, timeout: float = 60) -> str:
        """A command in a running container; its output."""
        return podman("exec", container, *args, timeout=timeout).stdout

    def psql(self, sql: str) -> list[str]:
        """Rows of a query in the db container, as lines of `|`-separated fields."""
        out = self.exec(self.name("db"), "psql", "-X", "-A", "-t", "-U", "sponsorbot",
                        "-d", "sponsorbot", "-c", sql)  # fmt: skip
        return [line for line in out.splitlines() if line]

    def wait_healthy(self, service: str, timeout: float) -> None:
        """Until compose.yaml's health check of the service passes (`podman healthcheck run`:
        podman schedules health checks through systemd, which this machine does not run)."""
        name = self.name(service)
        wait_until(
            lambda: podman("healthcheck", "run", name, check=False).returncode == 0,
            timeout,
            lambda: f"{name} never healthy:\n{self.logs(name)[-3000:]}",
        )

    def teardown(self) -> None:
        """Every container, volume and network of the project, gone (compose first, then by
        label: podman-compose's down misses the copies of a scaled service)."""
        command = _compose_command()
        if command is not None and (self.directory / ".env").exists():
            run([*command, "down", "-v", "-t", "5"], timeout=120, cwd=self.directory, check=False)
        label = f"label=io.podman.compose.project={self.project}"
        ids = podman("ps", "-a", "-q", "--filter", label, check=False).stdout.split()
        if ids:
            podman("rm", "-f", "-t", "3", *ids, timeout=120, check=False)
        volumes = podman("volume", "ls", "-q", "--filter", label, check=False).stdout.split()
        if volumes:
            podman("volume", "rm", "-f", *volumes, check=False)
        podman("network", "rm", "-f", f"{self.project}_sponsorbot", check=False)
        # The image update.sh kept, and the builds' superseded images; sponsorbot:local and the
        # layers under it stay, so that the next run builds from cache.
        podman("rmi", "sponsorbot:previous", check=False)
        podman("image", "prune", "-f", timeout=120, check=False)


def wait_until(ok: Callable[[], bool], timeout: float, why: Callable[[], str]) -> None:
    """Poll `ok` twice a second until it is true; after TIMEOUT seconds fail with `why()`."""
    deadline = time.monotonic() + timeout
    while not ok():
        if time.monotonic() > deadline:
            raise AssertionError(why())
        time.sleep(0.5)
