"""Settings: one object, read from the environment (prefix ``SPONSORBOT_``) or a ``.env`` file."""

from __future__ import annotations

import ipaddress
import os
import secrets
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

import platformdirs
from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

ENV_PREFIX = "SPONSORBOT_"


class Role(StrEnum):
    """The roles one program can play; `run` with no role plays both."""

    API = "api"
    WORKER = "worker"


class TronNetwork(StrEnum):
    """TRON networks with an official USDT contract we accept."""

    MAINNET = "mainnet"
    NILE = "nile"
    SHASTA = "shasta"


_TRONGRID_URLS = {
    TronNetwork.MAINNET: "https://api.trongrid.io",
    TronNetwork.NILE: "https://nile.trongrid.io",
    TronNetwork.SHASTA: "https://api.shasta.trongrid.io",
}


def _default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("sponsorbot", appauthor=False))


def _check_http_url(value: str, name: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{name} must be an http:// or https:// URL, got {value!r}")
    return value.rstrip("/")


def installation_keys(secret: bytes) -> list[bytes]:
    """The keys in SPONSORBOT_SECRET_KEY, newest first: one, or a rotation's "new,old"."""
    # Not stripped: a key is used exactly as it was given, as before rotation existed.
    return [key for key in secret.split(b",") if key] or [secret]


def _split(value: str) -> list[str]:
    return [part.strip() for part in value.replace(" ", ",").split(",") if part.strip()]


class Settings(BaseSettings):
    """Every setting of the README's settings table, plus the engine's tuning knobs."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
    )

    database_url: str | None = None
    data_dir: Path = Field(default_factory=_default_data_dir)
    telegram_api: str = "https://api.telegram.org"
    public_url: str | None = None
    panel_url: str | None = None
    trusted_proxies: str = ""
    cookie_secure: bool | None = None
    metrics_token: SecretStr | None = None
    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=1, le=65535)
    secret_key: SecretStr | None = None
    tron_network: TronNetwork = TronNetwork.MAINNET
    # Whether a shop may be set to Nile or Shasta: their coins are free from faucets, so a
    # shop on one would start real ads for test money (ADR 0009). Off unless trying the shop.
    allow_testnet: bool = False
    # One node per network (ADR 0018), each falling back to trongrid_url (one URL for every
    # network, as the simulator serves), then to the network's public TronGrid. Whichever
    # applies, the verifier first checks that the node has that network's block 0.
    trongrid_url_mainnet: str | None = None
    trongrid_url_nile: str | None = None
    trongrid_url_shasta: str | None = None
    trongrid_url: str | None = None
    trongrid_api_key: SecretStr | None = None
    price_coingecko_url: str = "https://api.coingecko.com"
    price_kraken_url: str = "https://api.kraken.com"
    price_binance_url: str = "https://api.binance.com"

    log_format: Literal["text", "json"] = "text"
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"

    pool_min_size: int = Field(default=2, ge=0, le=200)
    pool_max_size: int = Field(default=20, ge=1, le=500)
    statement_cache_size: int = Field(default=256, ge=0)

    # Updates a worker holds at once: it starts at worker_slots and grows up to
    # worker_slots_max while updates wait and the process keeps pace (engine/inhand.py).
    worker_slots: int = Field(default=32, ge=1, le=1024)
    worker_slots_max: int = Field(default=512, ge=1, le=4096)
    # How long a finished update's done mark waits for others to commit with it in one round
    # trip and one WAL flush (engine/commits.py); 0: only those finished in the same instant.
    # The same trade for the two other statements every update costs: how long the webhook
    # intake gathers updates into one insert (engine/gathered.py), and how long a woken worker
    # lets updates gather before it claims (engine/worker.py). Longer: fewer transactions and
    # less CPU per update, at the price of up to that many milliseconds of answer time. The
    # defaults add about 50 ms at the median and cut the CPU per visitor by a quarter (ADR
    # 0024, docs/load-test.md round six).
    worker_commit_gather_ms: float = Field(default=20.0, ge=0, le=100)
    intake_gather_ms: float = Field(default=25.0, ge=0, le=100)
    worker_claim_gather_ms: float = Field(default=50.0, ge=0, le=200)
    lock_timeout_s: float = Field(default=120.0, gt=0)
    max_attempts: int = Field(default=8, ge=1, le=100)
    retry_for_h: float = Field(default=24.0, gt=0, le=24 * 30)
    retry_cap_s: float = Field(default=600.0, ge=0.1, le=86400)
    send_per_bot_per_s: int = Field(default=25, ge=1, le=1000)
    send_per_chat_per_s: int = Field(default=3, ge=1, le=100)
    send_concurrency: int = Field(default=4, ge=1, le=64)
    # While Telegram fails a bot's calls, one of them is tried again this often (and a failing
    # getUpdates at least this often), so its return is noticed within this long; then all that
    # waits for the bot is tried again at once, at its limit (engine/sender.py, worker.py).
    recovery_probe_s: float = Field(default=5.0, gt=0, le=300)
    lease_s: float = Field(default=30.0, gt=0)
    retention_days: float = Field(default=7.0, ge=0)
    dead_keep_days: float = Field(default=30.0, ge=1)
    audit_keep_days: float = Field(default=365.0, ge=30)
    stats_keep_months: int = Field(default=13, ge=1, le=120)
    shutdown_grace_s: float = Field(default=8.0, ge=0, le=60)
    # The Citus source tarball `sponsorbot citus up` builds (a test cluster; docs/scaling.md).
    citus_source: Path | None = None

    @field_validator("database_url")
    @classmethod
    def _database_url(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("postgres", "postgresql"):
            raise ValueError("must be a postgresql://user:password@host:port/database URL")
        if not parts.netloc and "host=" not in parts.query:
            raise ValueError("names no host (postgresql://user:password@host:port/database)")
        try:
            _ = parts.port
        except ValueError:
            raise ValueError("has a port that is not a number") from None
        return value

    @field_validator("telegram_api")
    @classmethod
    def _telegram_api(cls, value: str) -> str:
        return _check_http_url(value, "the Bot API base")

    @field_validator("price_coingecko_url", "price_kraken_url", "price_binance_url")
    @classmethod
    def _price_url(cls, value: str) -> str:
        return _check_http_url(value, "a price source's base URL")

    @field_validator("trusted_proxies")
    @classmethod
    def _trusted_proxies(cls, value: str) -> str:
        for part in _split(value):
            try:
                ipaddress.ip_network(part, strict=False)
            except ValueError:
                raise ValueError(f"{part!r} is not an IP address or network") from None
        return value

    @field_validator(
        "public_url",
        "panel_url",
        "trongrid_url",
        "trongrid_url_mainnet",
        "trongrid_url_nile",
        "trongrid_url_shasta",
    )
    @classmethod
    def _optional_url(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        return _check_http_url(value, "the URL")

    @cached_property
    def trusted_networks(self) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
        """The reverse proxies whose forwarding headers are believed (empty: none)."""
        return tuple(ipaddress.ip_network(p, strict=False) for p in _split(self.trusted_proxies))

    @cached_property
    def resolved_trongrid_url(self) -> str:
        """TronGrid's base URL for SPONSORBOT_TRON_NETWORK, as :meth:`trongrid_url_for` picks it."""
        return self.trongrid_url_for(self.tron_network)

    def trongrid_url_for(self, network: TronNetwork) -> str:
        """TronGrid's base URL for `network` (a shop's own): that network's setting
        (SPONSORBOT_TRONGRID_URL_MAINNET, …) when set, else SPONSORBOT_TRONGRID_URL (a node of
        your own, or the simulator), else that network's public endpoint."""
        own: dict[TronNetwork, str | None] = {
            TronNetwork.MAINNET: self.trongrid_url_mainnet,
            TronNetwork.NILE: self.trongrid_url_nile,
            TronNetwork.SHASTA: self.trongrid_url_shasta,
        }
        return own[network] or self.trongrid_url or _TRONGRID_URLS[network]

    @property
    def key_file(self) -> Path:
        """Where the key is kept when SPONSORBOT_SECRET_KEY is not set."""
        return self.data_dir / "secret.key"

    def existing_secret(self) -> bytes | None:
        """The key if there is one already (the setting, else the key file); never makes one.

        Raises OSError when the key file is there but cannot be read."""
        if self.secret_key is not None:
            return self.secret_key.get_secret_value().encode()
        if not self.key_file.is_file():
            return None
        return self.key_file.read_text().strip().encode()

    def secret(self) -> bytes:
        """The key that encrypts bot tokens: the setting, or one generated into the data dir.

        Keep the key outside the data dir in production (the setting): a backup of the data
        dir would otherwise hold both the encrypted tokens and their key.
        """
        existing = self.existing_secret()
        if existing is not None:
            return existing
        path = self.key_file
        if not path.exists():
            # Only this user may look inside: the key sits here, and often the database too.
            self.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            # Created 0600 from the start (no window with wider rights), then linked into place,
            # so two processes starting together agree on one complete key.
            tmp = path.with_suffix(f".{secrets.token_hex(4)}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                with os.fdopen(fd, "w") as out:
                    out.write(secrets.token_urlsafe(48))
                os.link(tmp, path)
            except FileExistsError:
                pass
            finally:
                tmp.unlink()
        return path.read_text().strip().encode()

    @field_validator("secret_key")
    @classmethod
    def _secret_key(cls, value: SecretStr | None) -> SecretStr | None:
        # Each key of a rotation list ("new,old") is checked; the value is never echoed.
        if value is not None:
            for key in installation_keys(value.get_secret_value().encode()):
                if len(key) < 32:
                    raise ValueError(
                        "each key must be at least 32 bytes; make one with"
                        " python -c 'import secrets; print(secrets.token_urlsafe(48))'"
                    )
        return value


# Values never echoed back in an error: they may hold passwords or keys.
_SECRET_FIELDS = frozenset({"secret_key", "trongrid_api_key", "database_url", "metrics_token"})


class SettingsError(Exception):
    """A setting has a wrong value; the message is one line naming it."""


def load_settings(**overrides: object) -> Settings:
    """Read the settings, turning a validation failure into one clear line."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "?"
        message = first["msg"].removeprefix("Value error, ")
        line = f"invalid setting {ENV_PREFIX}{field.upper()}: {message}"
        if field not in _SECRET_FIELDS:
            line += f" (got {first.get('input')!r})"
        raise SettingsError(line) from None
