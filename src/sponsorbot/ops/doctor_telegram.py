"""The doctor's checks that ask Telegram: each bot's token, its webhook, and the clock.

Every call has a short timeout and the bots are checked a few at a time, so the whole part
takes seconds even when Telegram does not answer. A token is decrypted only to be used for the
call: what is printed names the bot by its @username and id.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from sponsorbot.engine.token_box import TokenBox, TokenError
from sponsorbot.ops.doctor_local import Finding, fail, ok, skip, warn
from sponsorbot.telegram import Bot, BotApi, NetworkError, TelegramError, Unauthorized

# A webhook delivery error younger than this, with updates waiting, means people are not
# being answered now; an older one is history (Telegram keeps the last error for good).
RECENT_ERROR_S = 10 * 60
STALE_ERROR_S = 60 * 60
SKEW_WARN_S = 5.0
SKEW_FAIL_S = 60.0
NTP = "enable NTP (timedatectl set-ntp true)"
# getMe and getWebhookInfo, each bounded by the client's own timeout; a bot's own deadline
# allows one call more, a backstop that never cuts off a bot whose calls end in time.
CALLS_PER_BOT = 2


@dataclass(frozen=True, slots=True)
class Probe:
    """One plain request to the Bot API's server: whether it answered, and its clock."""

    error: str | None
    skew_s: float | None = None


@dataclass(frozen=True, slots=True)
class BotRow:
    """What the doctor reads of a bot (the token still sealed)."""

    id: int
    username: str
    mode: str
    status: str
    problem: str | None
    token_enc: bytes
    webhook_path: str

    @property
    def name(self) -> str:
        """How the lines name the bot: never by its token."""
        return f"@{self.username} (id {self.id})" if self.username else f"id {self.id}"


async def probe_telegram(api: BotApi, timeout_s: float) -> Probe:
    """HEAD the Bot API server's root (no token in the URL) and read its `Date` header.

    Any HTTP answer counts as reachable; the skew is Telegram's clock minus ours, measured
    against the middle of the round trip (the header has whole seconds, hence the +0.5).
    """
    started = time.time()
    try:
        async with api.session().head(
            f"{api.base_url}/",
            allow_redirects=False,
            timeout=aiohttp.ClientTimeout(total=timeout_s),
        ) as response:
            date = response.headers.get("Date")
    except (aiohttp.ClientError, TimeoutError, OSError, ValueError) as exc:
        reason = str(exc)[:200] or f"timed out after {timeout_s:g} s"
        return Probe(f"{type(exc).__name__}: {reason}")
    finished = time.time()
    if date is None:
        return Probe(None)
    try:
        theirs = parsedate_to_datetime(date).timestamp() + 0.5
    except (TypeError, ValueError):
        return Probe(None)
    return Probe(None, theirs - (started + finished) / 2)


def unreachable(api: BotApi, probe: Probe) -> Finding:
    """The one line saying Telegram could not be reached at all."""
    return fail(
        "telegram",
        f"no answer from {api.base_url} ({probe.error}): check this server's network, DNS and "
        "firewall towards it (or SPONSORBOT_TELEGRAM_API)",
    )


def clock_finding(probe: Probe) -> Finding:
    """Our clock against Telegram's `Date` header."""
    if probe.error is not None:
        return skip("clock", "not compared: Telegram did not answer")
    if probe.skew_s is None:
        return warn("clock", "not compared: Telegram's answer had no usable Date header")
    skew = probe.skew_s
    if abs(skew) < 1.5:
        # The header has whole seconds: closer than this cannot be told apart.
        return ok("clock", "within a second of Telegram's")
    side = "behind" if skew > 0 else "ahead of"
    detail = f"this server's clock is {_duration(abs(skew))} {side} Telegram's"
    if abs(skew) <= SKEW_WARN_S:
        return ok("clock", detail)
    detail += f": {NTP}"
    return fail("clock", detail) if abs(skew) > SKEW_FAIL_S else warn("clock", detail)


async def check_bots(
    api: BotApi,
    bots: Sequence[BotRow],
    box: TokenBox | None,
    public_url: str | None,
    *,
    parallel: int,
    call_timeout_s: float,
) -> list[Finding]:
    """Two lines per bot (its token, its webhook), in the order of `bots`.

    At most `parallel` bots are asked at once. Each bot's deadline starts when its turn comes,
    not while it waits for one, so a healthy bot is never failed for the bots before it; the
    whole part takes at most ceil(len(bots) / parallel) bot deadlines.
    """
    if not bots:
        return [ok("bots", "none connected yet")]
    gate = asyncio.Semaphore(parallel)
    deadline_s = call_timeout_s * (CALLS_PER_BOT + 1)

    async def one(row: BotRow) -> list[Finding]:
        async with gate:
            try:
                async with asyncio.timeout(deadline_s):
                    return await _check_bot(api, row, box, public_url)
            except TimeoutError:
                return [
                    fail(
                        f"bot {row.name}",
                        f"Telegram did not answer getMe and getWebhookInfo within "
                        f"{deadline_s:g} s: check this server's connection to {api.base_url}",
                    ),
                    skip(f"webhook {row.name}", "not checked"),
                ]

    checked = await asyncio.gather(*(one(row) for row in bots))
    return [finding for pair in checked for finding in pair]


def skipped_bots(bots: Sequence[BotRow], why: str) -> list[Finding]:
    """A skip line per bot, when Telegram cannot be asked at all."""
    if not bots:
        return [ok("bots", "none connected yet")]
    return [skip(f"bot {row.name}", why) for row in bots]


async def _check_bot(
    api: BotApi, row: BotRow, box: TokenBox | None, public_url: str | None
) -> list[Finding]:
    token_check, hook_check = f"bot {row.name}", f"webhook {row.name}"
    if box is None:
        return [
            fail(token_check, "its token cannot be decrypted: the secret key is missing"),
            skip(hook_check, "needs a readable token"),
        ]
    try:
        token = box.open(row.token_enc)
    except TokenError:
        return [
            fail(
                token_check,
                "its token cannot be decrypted: the secret key is wrong (not the one it was "
                "saved with); put back the key this installation used",
            ),
            skip(hook_check, "needs a readable token"),
        ]
    telegram = api.bot(token)
    refused = await _refused(telegram, row, api.base_url)
    if refused is not None:
        return [refused, skip(hook_check, "needs an accepted token")]
    if row.status == "token_refused":
        first = warn(
            token_check,
            "accepted by getMe again, but the bot is stopped as refused: resume it in the panel",
        )
    else:
        paused = "; the bot is paused" if row.status == "paused" else ""
        first = ok(token_check, f"accepted by getMe{paused}")
    if row.status != "active":
        return [first, skip(hook_check, f"the bot is {row.status.replace('_', ' ')}")]
    try:
        info = await telegram.get_webhook_info()
    except TelegramError as exc:
        return [first, fail(hook_check, f"getWebhookInfo failed: {_reason(exc)}")]
    return [first, _webhook(hook_check, row, info, public_url)]


async def _refused(telegram: Bot, row: BotRow, base_url: str) -> Finding | None:
    """None when getMe accepts the token for this very bot; else the FAIL line."""
    check = f"bot {row.name}"
    try:
        me = await telegram.get_me()
    except Unauthorized:
        return fail(
            check,
            "Telegram refuses its token (revoked in @BotFather?): store the bot's current token "
            f"with PUT /api/v1/bots/{row.id}/token",
        )
    except NetworkError as exc:
        return fail(
            check,
            f"Telegram did not answer getMe ({exc.description}): check this server's "
            f"connection to {base_url}",
        )
    except TelegramError as exc:
        return fail(check, f"getMe failed: {_reason(exc)}")
    if me.get("id") != row.id:
        return fail(check, "its token answers for another bot: store this bot's own token")
    return None


def _webhook(check: str, row: BotRow, info: dict[str, Any], public_url: str | None) -> Finding:
    url = str(info.get("url") or "")
    pending = int(info.get("pending_update_count") or 0)
    if row.mode == "polling":
        if url:
            return fail(
                check,
                f"a webhook to {_shown(url)} is set though the bot polls: another program uses "
                "this token (revoke it in @BotFather), or no worker runs to remove it",
            )
        if row.problem == "conflict":
            return warn(
                check,
                "another program polls with this token: stop it, or revoke the token in "
                "@BotFather and store the new one",
            )
        return ok(check, f"none, the bot polls; {pending} update(s) waiting")
    if public_url is None:
        return fail(
            check,
            "the bot is in webhook mode but SPONSORBOT_PUBLIC_URL is unset: set it to the "
            "https address Telegram reaches this server at",
        )
    expected = f"{public_url}/tg/{row.webhook_path}"
    if not url:
        return fail(
            check,
            f"no webhook is set ({pending} update(s) waiting at Telegram): pause and resume the "
            "bot in the panel to set it again",
        )
    if url != expected:
        return fail(
            check,
            f"Telegram delivers to {_shown(url)}, not to {public_url}/tg/…: pause and resume "
            "the bot in the panel (or another program uses this token)",
        )
    where = f"set to {public_url}/tg/…, {pending} update(s) waiting"
    error_at = info.get("last_error_date")
    if not isinstance(error_at, int):
        return ok(check, where)
    age = max(0.0, time.time() - error_at)
    error = f"last delivery error {_duration(age)} ago: {info.get('last_error_message') or '?'}"
    if age <= RECENT_ERROR_S and pending > 0:
        return fail(
            check,
            f"{where}; {error}: check that {public_url} reaches the api role "
            "(reverse proxy, certificate, firewall)",
        )
    if age <= STALE_ERROR_S:
        return warn(check, f"{where}; {error}")
    return ok(check, f"{where}; {error}")


def _shown(url: str) -> str:
    """A webhook URL without its path (the path is what Telegram posts to: not for output)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/…" if parts.netloc else "an address"


def _reason(exc: TelegramError) -> str:
    return f"{exc.error_code} {exc.description}" if exc.error_code else exc.description


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 36 * 3600:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:.0f} d"
