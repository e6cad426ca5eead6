from pathlib import Path

import pytest

from sponsorbot.config import Settings, SettingsError, TronNetwork, load_settings


def test_defaults_need_no_settings(clean_env: Path) -> None:
    settings = load_settings()
    assert settings.database_url is None
    assert settings.port == 8080
    assert settings.host == "127.0.0.1"
    assert settings.telegram_api == "https://api.telegram.org"
    assert settings.data_dir.name == "sponsorbot"


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("SPONSORBOT_PORT", "abc", "SPONSORBOT_PORT"),
        ("SPONSORBOT_PORT", "70000", "SPONSORBOT_PORT"),
        ("SPONSORBOT_DATABASE_URL", "mysql://x/y", "SPONSORBOT_DATABASE_URL"),
        ("SPONSORBOT_DATABASE_URL", "postgresql://h:port/db", "SPONSORBOT_DATABASE_URL"),
        ("SPONSORBOT_TELEGRAM_API", "ftp://x", "SPONSORBOT_TELEGRAM_API"),
        ("SPONSORBOT_TRON_NETWORK", "moon", "SPONSORBOT_TRON_NETWORK"),
    ],
)
def test_a_wrong_value_is_one_line_naming_the_setting(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str, words: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as caught:
        load_settings()
    message = str(caught.value)
    assert words in message
    assert "\n" not in message


def test_database_password_is_not_echoed(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPONSORBOT_DATABASE_URL", "postgresql://u:hunter2@h:nope/db")
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert "hunter2" not in str(caught.value)


def test_dotenv_file_is_read(clean_env: Path) -> None:
    (clean_env / ".env").write_text("SPONSORBOT_PORT=9099\nSPONSORBOT_PUBLIC_URL=http://x.test/\n")
    settings = load_settings()
    assert settings.port == 9099
    assert settings.public_url == "http://x.test"


def test_generated_secret_is_stable(clean_env: Path) -> None:
    settings = Settings(data_dir=clean_env / "data")
    first = settings.secret()
    assert len(first) >= 32
    assert Settings(data_dir=clean_env / "data").secret() == first
    assert (clean_env / "data" / "secret.key").stat().st_mode & 0o077 == 0


def test_each_network_has_its_own_trongrid_url(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Unset: each network's public TronGrid, never another network's (docs/adr/0018-tron-trust.md).
    public = load_settings()
    assert public.trongrid_url_for(TronNetwork.MAINNET) == "https://api.trongrid.io"
    assert public.trongrid_url_for(TronNetwork.NILE) == "https://nile.trongrid.io"
    assert public.trongrid_url_for(TronNetwork.SHASTA) == "https://api.shasta.trongrid.io"
    # The one URL for every network (the simulator) is the fallback; a network's own wins.
    monkeypatch.setenv("SPONSORBOT_TRONGRID_URL", "http://127.0.0.1:9000/")
    monkeypatch.setenv("SPONSORBOT_TRONGRID_URL_MAINNET", "https://node.example/tron/")
    monkeypatch.setenv("SPONSORBOT_TRONGRID_URL_NILE", "")
    settings = load_settings()
    assert settings.trongrid_url_for(TronNetwork.MAINNET) == "https://node.example/tron"
    assert settings.trongrid_url_for(TronNetwork.NILE) == "http://127.0.0.1:9000"
    assert settings.trongrid_url_for(TronNetwork.SHASTA) == "http://127.0.0.1:9000"
    assert settings.resolved_trongrid_url == "https://node.example/tron"


@pytest.mark.parametrize("network", ["MAINNET", "NILE", "SHASTA"])
def test_a_network_trongrid_url_is_checked(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch, network: str
) -> None:
    monkeypatch.setenv(f"SPONSORBOT_TRONGRID_URL_{network}", "nile.trongrid.io")
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert f"SPONSORBOT_TRONGRID_URL_{network}" in str(caught.value)
    assert "http:// or https://" in str(caught.value)
