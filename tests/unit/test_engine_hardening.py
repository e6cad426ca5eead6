"""The installation key: how it is made, kept, checked for length and rotated."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sponsorbot.config import Settings, SettingsError, load_settings
from sponsorbot.engine.token_box import TokenBox, TokenError

TOKEN = "1234567890:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0"
NEW = b"a-new-installation-key-of-enough-length-123"
OLD = b"the-old-installation-key-of-enough-length-456"


def test_a_generated_key_is_private_from_the_start_in_a_private_dir(clean_env: Path) -> None:
    """L4: secret.key is created 0600 (never wider) inside a data dir made 0700."""
    os.umask(0o022)
    data = clean_env / "fresh" / "data"
    key = Settings(data_dir=data).secret()
    assert len(key) >= 32
    assert (data / "secret.key").stat().st_mode & 0o777 == 0o600
    assert data.stat().st_mode & 0o777 == 0o700
    assert [p.name for p in data.iterdir()] == ["secret.key"]


@pytest.mark.parametrize("value", ["short", "", f"{NEW.decode()},tooshort"])
def test_a_short_key_is_refused_in_one_line_without_echoing_it(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """L4: SPONSORBOT_SECRET_KEY of fewer than 32 bytes (each, in a list) is refused."""
    monkeypatch.setenv("SPONSORBOT_SECRET_KEY", value)
    with pytest.raises(SettingsError) as caught:
        load_settings()
    message = str(caught.value)
    assert "SPONSORBOT_SECRET_KEY" in message and "32 bytes" in message
    assert "\n" not in message
    assert "tooshort" not in message


def test_new_comma_old_opens_both_and_seals_with_the_new(clean_env: Path) -> None:
    """L4: a key list rotates: tokens of the old key open, new seals use the first key."""
    old_sealed = TokenBox(OLD).seal(TOKEN)
    both = TokenBox(NEW + b"," + OLD)
    assert both.rotating
    assert both.open(old_sealed) == TOKEN
    resealed = both.reseal(old_sealed)
    assert TokenBox(NEW).open(resealed) == TOKEN
    assert TokenBox(NEW).open(both.seal(TOKEN)) == TOKEN
    with pytest.raises(TokenError):
        TokenBox(OLD).open(resealed)
    assert not TokenBox(NEW).rotating
    assert TokenBox(NEW).opens(resealed) and not TokenBox(OLD).opens(resealed)


def test_a_handler_s_own_os_error_is_no_outage() -> None:
    """H3: transient means the database or the network, not any OSError a handler raises
    (which would be retried for a day instead of going dead)."""
    import asyncpg

    from sponsorbot.db.errors import is_transient

    assert not is_transient(FileNotFoundError(2, "no such file"))
    assert is_transient(ConnectionRefusedError(111, "refused"))
    assert is_transient(OSError("Multiple exceptions: [Errno 111] Connect call failed"))
    assert is_transient(asyncpg.exceptions.AdminShutdownError())
    assert not is_transient(asyncpg.exceptions.UniqueViolationError())
