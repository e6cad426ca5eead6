"""The deployment files of issue 16, checked without a Docker daemon: shellcheck on every
script, compose.yaml against the Compose specification's JSON schema (tests/data/
compose-spec.json, vendored) and our own rules, the Dockerfile's rules, systemd-analyze on the
units. The scripts themselves and the Caddy site: test_shipping_scripts.py.
"""

from __future__ import annotations

import configparser
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
import yaml  # type: ignore[import-untyped]

REPO = Path(__file__).resolve().parents[2]
SCHEMA = Path(__file__).resolve().parents[1] / "data" / "compose-spec.json"
SKIPPED_DIRS = {".git", ".venv", "venv", "node_modules", "dist", ".mypy_cache", ".ruff_cache"}


def _scripts() -> list[Path]:
    found = []
    for root, dirs, files in os.walk(REPO):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS]
        found += [Path(root, f) for f in files if f.endswith(".sh")]
    return sorted(found)


def _run(args: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=60, check=False, **kwargs)


# ---------------------------------------------------------------- scripts


def test_every_script_passes_shellcheck_and_is_executable() -> None:
    scripts = _scripts()
    assert {p.relative_to(REPO).as_posix() for p in scripts} >= {
        "install.sh",
        "update.sh",
        "scripts/release.sh",
        "deploy/common.sh",
    }
    runnable = [p for p in scripts if p.read_text().startswith("#!")]
    assert all(os.access(p, os.X_OK) for p in runnable), "chmod +x the scripts"
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (apt-get install shellcheck)")
    result = _run(["shellcheck", "-x", *map(str, scripts)], cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr


def test_gitattributes_ask_for_lf() -> None:
    lines = (REPO / ".gitattributes").read_text().splitlines()
    assert "* text=auto eol=lf" in lines
    assert "*.sh text eol=lf" in lines


# ---------------------------------------------------------------- compose.yaml

_VARIABLE = re.compile(r"\$\{([A-Z0-9_]+)(?:(:?[-?])([^}]*))?\}")


def _example_env() -> dict[str, str]:
    """.env.example with its empty secrets filled, as an owner's .env would be."""
    env = {}
    for line in (REPO / ".env.example").read_text().splitlines():
        if re.match(r"^[A-Z0-9_]+=", line):
            key, value = line.split("=", 1)
            env[key] = value or "f" * 64
    return env


def _interpolate(obj: Any, env: dict[str, str]) -> Any:
    """Compose's ${VAR}, ${VAR:-default} and ${VAR:?error}, enough for this file."""
    if isinstance(obj, dict):
        return {k: _interpolate(v, env) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_interpolate(v, env) for v in obj]
    if not isinstance(obj, str):
        return obj

    def value(match: re.Match[str]) -> str:
        name, kind, word = match.groups()
        if env.get(name):
            return env[name]
        if kind and kind.endswith("?"):
            raise KeyError(f"{name}: {word}")
        return word or ""

    return _VARIABLE.sub(value, obj)


def compose_problems(doc: dict[str, Any]) -> list[str]:
    """Our rules for an interpolated compose file; empty when it keeps them."""
    problems = []
    services = doc["services"]
    for name, service in services.items():
        for port in service.get("ports", []):
            public = {"80:80", "443:443", "443:443/udp"}
            if name == "caddy" and port not in public:
                problems.append(f"caddy publishes {port}")
            if name != "caddy" and not str(port).startswith("127.0.0.1:"):
                problems.append(f"{name} publishes {port} beyond 127.0.0.1")
        if "container_name" in service:
            problems.append(f"{name} has a container_name")
        if name in ("api", "worker", "migrate") and service.get("env_file") != ".env":
            problems.append(f"{name} does not read .env")
    for name in ("db", "api", "caddy"):
        if not services[name].get("healthcheck", {}).get("test"):
            problems.append(f"{name} has no health check")
    if services["worker"].get("ports"):
        problems.append("worker publishes a port")
    if "pg_isready" not in services["db"].get("healthcheck", {}).get("test", []):
        problems.append("db's health check is not pg_isready")
    for name in ("api", "worker"):
        needs = services[name].get("depends_on", {})
        if needs.get("db", {}).get("condition") != "service_healthy":
            problems.append(f"{name} does not wait for a healthy db")
        if needs.get("migrate", {}).get("condition") != "service_completed_successfully":
            problems.append(f"{name} does not wait for the migrations")
    subnets = [c["subnet"] for c in doc["networks"]["sponsorbot"]["ipam"]["config"]]
    if services["api"]["environment"]["SPONSORBOT_TRUSTED_PROXIES"] not in subnets:
        problems.append("the trusted proxies are not the network Caddy is on")
    return problems


@pytest.fixture(scope="module")
def compose_doc() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((REPO / "compose.yaml").read_text())
    return doc


def test_compose_file_follows_the_compose_specification(compose_doc: dict[str, Any]) -> None:
    schema = json.loads(SCHEMA.read_text())
    errors = [e.message for e in jsonschema.Draft7Validator(schema).iter_errors(compose_doc)]
    assert errors == []


def test_compose_file_keeps_our_rules(compose_doc: dict[str, Any]) -> None:
    doc = _interpolate(compose_doc, _example_env())
    assert compose_problems(doc) == []
    services = doc["services"]
    assert set(services) == {"db", "migrate", "api", "worker", "caddy"}
    assert services["db"]["image"] == "postgres:18"
    assert "pgdata:/var/lib/postgresql" in services["db"]["volumes"]
    assert services["caddy"]["image"] == "caddy:2"
    assert {"caddy-data:/data", "caddy-config:/config"} <= set(services["caddy"]["volumes"])
    for volume in services["caddy"]["volumes"]:
        if volume.startswith("./"):
            assert (REPO / volume.split(":")[0]).is_file(), volume
    api_env = services["api"]["environment"]
    assert api_env["SPONSORBOT_PUBLIC_URL"] == "https://bot.example.com"
    assert api_env["SPONSORBOT_DATABASE_URL"].endswith("@db:5432/sponsorbot")
    assert services["worker"]["command"] == ["run", "--role", "worker"]


def test_compose_refuses_to_start_without_the_secrets(compose_doc: dict[str, Any]) -> None:
    env = _example_env()
    for required in ("POSTGRES_PASSWORD", "SPONSORBOT_SECRET_KEY", "SPONSORBOT_DOMAIN"):
        with pytest.raises(KeyError, match=required):
            _interpolate(compose_doc, {**env, required: ""})
    used = set(_VARIABLE.findall((REPO / "compose.yaml").read_text()))
    documented = (REPO / ".env.example").read_text()
    assert all(re.search(rf"^#?{name}=", documented, re.M) for name, _, _ in used)


@pytest.mark.parametrize(
    ("service", "change", "problem"),
    [
        ("api", {"ports": ["8080:8080"]}, "api publishes 8080:8080 beyond 127.0.0.1"),
        ("worker", {"container_name": "w"}, "worker has a container_name"),
        ("db", {"healthcheck": {"disable": True}}, "db has no health check"),
    ],
)
def test_compose_rules_catch_a_broken_file(
    compose_doc: dict[str, Any], service: str, change: dict[str, Any], problem: str
) -> None:
    doc = _interpolate(compose_doc, _example_env())
    doc["services"][service].update(change)
    assert problem in compose_problems(doc)


# ---------------------------------------------------------------- Dockerfile


def _instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    joined = re.sub(r"\\\n\s*", " ", "\n".join(lines))
    found = []
    for line in joined.splitlines():
        if line.strip():
            word, _, rest = line.strip().partition(" ")
            found.append((word.upper(), rest.strip()))
    return found


def dockerfile_problems(text: str) -> list[str]:
    """Our rules for the Dockerfile; empty when it keeps them."""
    steps = _instructions(text)
    problems = []
    starts = [i for i, (word, _) in enumerate(steps) if word == "FROM"]
    if len(starts) < 2:
        problems.append("not multi-stage")
    final = steps[starts[-1] :] if starts else steps
    users = [args for word, args in final if word == "USER"]
    if not users or users[-1].split(":")[0] in ("root", "0"):
        problems.append("the final stage runs as root")
    health = [args for word, args in final if word == "HEALTHCHECK"]
    if not health or "/healthz" not in health[-1]:
        problems.append("no HEALTHCHECK on /healthz")
    for word, args in steps:
        if word in ("ENV", "ARG") and re.search(r"SECRET|PASSWORD|PASSWD|TOKEN", args, re.I):
            problems.append(f"{word} {args} puts a secret into the image")
        if word in ("COPY", "ADD") and ".env" in args.split():
            problems.append(f"{word} {args} copies .env")
    settings = dict(steps)
    if json.loads(settings.get("ENTRYPOINT", "[]")) != ["sponsorbot"]:
        problems.append("ENTRYPOINT is not sponsorbot")
    if json.loads(settings.get("CMD", "[]")) != ["run", "--role", "api"]:
        problems.append("CMD is not run --role api")
    if "SPONSORBOT_HOST=0.0.0.0" not in " ".join(a for w, a in final if w == "ENV"):
        problems.append("the api would listen on the container's loopback only")
    return problems


def test_dockerfile_keeps_our_rules() -> None:
    text = (REPO / "Dockerfile").read_text()
    assert dockerfile_problems(text) == []
    assert any(w == "COPY" and a.startswith("--from=build") for w, a in _instructions(text))


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda t: t.replace("USER 10001:10001", "USER root"), "the final stage runs as root"),
        (
            lambda t: t + "ENV SPONSORBOT_SECRET_KEY=abc\n",
            "ENV SPONSORBOT_SECRET_KEY=abc puts a secret into the image",
        ),
        (lambda t: re.sub(r"HEALTHCHECK[^\n]*\\\n[^\n]*\n", "", t), "no HEALTHCHECK on /healthz"),
    ],
)
def test_dockerfile_rules_catch_a_broken_file(edit: Any, problem: str) -> None:
    assert problem in dockerfile_problems(edit((REPO / "Dockerfile").read_text()))


def test_dockerignore_lets_in_only_what_the_build_copies() -> None:
    rules = [r for r in (REPO / ".dockerignore").read_text().splitlines() if r and r[0] != "#"]
    assert rules[0] == "*", "everything is left out unless named"
    allowed = {r[1:].rstrip("/") for r in rules if r.startswith("!")}
    assert ".env" not in allowed
    for word, args in _instructions((REPO / "Dockerfile").read_text()):
        if word == "COPY" and not args.startswith("--from"):
            for source in args.split()[:-1]:
                assert any(source == a or source.startswith(a + "/") for a in allowed), source


# ---------------------------------------------------------------- systemd units

UNITS = REPO / "deploy" / "systemd"


@pytest.mark.parametrize(
    ("unit", "role"), [("sponsorbot-api.service", "api"), ("sponsorbot-worker@.service", "worker")]
)
def test_units_run_the_role_as_sponsorbot_hardened(unit: str, role: str) -> None:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string((UNITS / unit).read_text())
    service = parser["Service"]
    assert service["ExecStart"] == f"/opt/sponsorbot/venv/bin/sponsorbot run --role {role}"
    assert service["User"] == "sponsorbot"
    assert service["EnvironmentFile"] == "/opt/sponsorbot/.env"
    assert service["Restart"] == "on-failure"
    assert "/var/lib/sponsorbot" in service["ReadWritePaths"].split()
    for option, value in [
        ("NoNewPrivileges", "yes"),
        ("ProtectSystem", "strict"),
        ("PrivateTmp", "yes"),
        ("ProtectHome", "yes"),
        ("CapabilityBoundingSet", ""),
    ]:
        assert service[option] == value, option
    assert "postgresql.service" in parser["Unit"]["After"].split()
    assert parser["Install"]["WantedBy"] == "multi-user.target"


def test_systemd_accepts_the_units(tmp_path: Path) -> None:
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed")
    program = shutil.which("sponsorbot")
    assert program is not None
    for unit in UNITS.iterdir():
        text = unit.read_text().replace("/opt/sponsorbot/venv/bin/sponsorbot", program)
        (tmp_path / unit.name).write_text(text)
    units = ["sponsorbot-api.service", "sponsorbot-worker@1.service"]
    result = _run(["systemd-analyze", "verify", *units], cwd=tmp_path)
    # An unknown option is only a warning to systemd: any output fails the test.
    assert (result.returncode, result.stdout + result.stderr) == (0, "")
