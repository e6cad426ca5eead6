import io
import json
import logging

import pytest

from sponsorbot.logs import configure_logging, mask_tokens

TOKEN = "1234567890:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0"


@pytest.fixture
def captured() -> io.StringIO:
    stream = io.StringIO()
    configure_logging("text", "DEBUG", stream)
    return stream


def test_mask_tokens_inside_urls() -> None:
    url = f"https://api.telegram.org/bot{TOKEN}/getMe"
    assert TOKEN not in mask_tokens(url)
    assert mask_tokens("nothing here 12:short") == "nothing here 12:short"


def test_token_in_message_argument_and_exception_is_masked(captured: io.StringIO) -> None:
    log = logging.getLogger("sponsorbot.test")
    log.info(f"calling https://api.telegram.org/bot{TOKEN}/getMe")
    log.debug("token %s and %r", TOKEN, {"token": TOKEN})
    try:
        raise RuntimeError(f"failed for bot{TOKEN}")
    except RuntimeError:
        log.exception("it broke")
    log.warning("stack", stack_info=True, extra={"token": TOKEN})
    out = captured.getvalue()
    assert TOKEN not in out
    assert out.count("<token>") >= 4
    assert "RuntimeError" in out


def test_json_lines_are_masked_too() -> None:
    stream = io.StringIO()
    configure_logging("json", "INFO", stream)
    log = logging.getLogger("sponsorbot.test")
    try:
        raise ValueError(TOKEN)
    except ValueError:
        log.exception("token %s", TOKEN)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1
    entry = json.loads(lines[0])
    assert entry["level"] == "ERROR"
    assert TOKEN not in lines[0]
    assert "ValueError" in entry["exc"]


def test_default_handler_follows_a_swapped_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    """A closed stderr from an earlier swap (CliRunner, pytest) must not break later records."""
    first = io.StringIO()
    monkeypatch.setattr("sys.stderr", first)
    configure_logging("text", "INFO")
    first.close()
    second = io.StringIO()
    monkeypatch.setattr("sys.stderr", second)
    logging.getLogger("swap").info("after the swap %s", TOKEN)
    assert second.getvalue().endswith("INFO    swap: after the swap <token>\n")
    assert "Logging error" not in second.getvalue()


def test_percent_encoded_tokens_are_masked_and_the_scrubber_uses_the_same_pattern() -> None:
    """L16: the log mask catches a token whose colon a URL encoded as %3A, as the scrubber does."""
    from sponsorbot.logs import TOKEN_PATTERN
    from sponsorbot.telegram.errors import _TOKEN_RE, scrub

    encoded = TOKEN.replace(":", "%3A")
    url = f"https://api.telegram.org/bot{encoded}/getMe"
    assert encoded not in mask_tokens(url)
    assert "%3a" + TOKEN.split(":")[1] not in mask_tokens(url.replace("%3A", "%3a"))
    assert _TOKEN_RE is TOKEN_PATTERN
    assert scrub(url) == mask_tokens(url)


def test_an_active_bot_shows_no_token_in_its_repr() -> None:
    """L16: ActiveBot's repr (a log line, a traceback's locals) leaves the token out."""
    from sponsorbot.engine.bots import ActiveBot
    from sponsorbot.engine.unit import BotInfo

    bot = ActiveBot(BotInfo(1234567890, "demo_bot", "polling", "active"), TOKEN)
    assert TOKEN not in repr(bot)
    assert "demo_bot" in repr(bot)
