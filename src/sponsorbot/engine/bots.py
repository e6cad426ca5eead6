"""Bots: add, pause, resume, remove; the directory of active bots a worker serves."""

from __future__ import annotations

import hashlib
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import asyncpg

from sponsorbot.engine.notify import Notifier
from sponsorbot.engine.token_box import TokenBox, TokenError, bot_id_of, tail
from sponsorbot.engine.unit import BotInfo
from sponsorbot.telegram import BotApi, TelegramError, Unauthorized

log = logging.getLogger(__name__)

BOT_COLUMNS = "id, username, mode, status, problem, problem_at, token_tail, created_at, updated_at"
ONE_BOT = f"SELECT {BOT_COLUMNS} FROM bots WHERE id = $1"
ALL_BOTS = f"SELECT {BOT_COLUMNS} FROM bots ORDER BY created_at, id"
DELETE_BOT = "DELETE FROM bots WHERE id = $1"
INSERT_BOT = """
INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path, webhook_secret_hash)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (id) DO NOTHING
RETURNING id
"""
ACTIVE_BOTS = """
SELECT id, username, mode, status, problem, token_enc FROM bots WHERE status = 'active'
"""
WEBHOOK_TARGET = "SELECT id, status, webhook_secret_hash FROM bots WHERE webhook_path = $1"
SET_STATUS = "UPDATE bots SET status = $2, updated_at = now() WHERE id = $1 RETURNING id"
SET_SECRET = "UPDATE bots SET webhook_secret_hash = $2, updated_at = now() WHERE id = $1"
SET_MODE = "UPDATE bots SET mode = $2, updated_at = now() WHERE id = $1"
BOT_MODE = "SELECT mode, webhook_path, webhook_secret_hash FROM bots WHERE id = $1"
RESTORE_MODE = """
UPDATE bots SET mode = $2, webhook_secret_hash = $3, updated_at = now() WHERE id = $1
"""
# A problem is written only when it changes: pollers report theirs on every failed call.
SET_PROBLEM = """
UPDATE bots SET problem = $2, problem_at = now()
WHERE id = $1 AND problem IS DISTINCT FROM $2
RETURNING id
"""
CLEAR_PROBLEM = """
UPDATE bots SET problem = NULL, problem_at = now() WHERE id = $1 AND problem = $2 RETURNING id
"""
KEY_CHECK = "SELECT sealed FROM token_key_check"
WRITE_KEY_CHECK = "INSERT INTO token_key_check (sealed) VALUES ($1) ON CONFLICT DO NOTHING"
RESEAL_KEY_CHECK = "UPDATE token_key_check SET sealed = $1"
SOME_TOKENS = "SELECT token_enc FROM bots ORDER BY created_at DESC LIMIT 20"
ALL_TOKENS = "SELECT id, token_enc FROM bots"
RESEAL_TOKEN = "UPDATE bots SET token_enc = $2 WHERE id = $1 AND token_enc = $3"
BOT_TOKEN = "SELECT token_enc, webhook_path, mode FROM bots WHERE id = $1"
SET_TOKEN = "UPDATE bots SET token_enc = $2, token_tail = $3, updated_at = now() WHERE id = $1"

BOTS_CHANGED = "bots"


class BotError(Exception):
    """A bot operation the owner asked for cannot be done; the message says why."""


class BotTokenMalformed(BotError):
    """The text is not shaped like a bot token."""


class BotTokenRefused(BotError):
    """Telegram refused the token."""


class BotExists(BotError):
    """This bot is already connected."""


class BotNotFound(BotError):
    """No bot with that id."""


class WebhookUnavailable(BotError):
    """Webhook mode without SPONSORBOT_PUBLIC_URL."""


class WebhookRefused(BotError):
    """Telegram refused setWebhook (or deleteWebhook); nothing was changed."""


class KeyMismatch(Exception):
    """SPONSORBOT_SECRET_KEY is not the key the database's tokens were sealed with."""


KEY_MISMATCH = (
    "SPONSORBOT_SECRET_KEY does not match the key this database's bot tokens were saved with:"
    " give every process (api and worker) the same key, or to change it set"
    " SPONSORBOT_SECRET_KEY=new,old until the next start has sealed them again"
)


@dataclass(frozen=True, slots=True)
class KeyProof:
    """What the database holds that the right key opens: its key check, or, before the first
    start wrote one, the newest stored tokens (both empty on a new installation)."""

    check: bytes | None
    tokens: list[bytes]

    @property
    def empty(self) -> bool:
        """Nothing is sealed yet: any key will do."""
        return self.check is None and not self.tokens

    def opened_by(self, box: TokenBox) -> bool:
        """Whether `box` holds the key the database's secrets were sealed with."""
        if self.check is not None:
            return box.opens(self.check)
        # One damaged row must not count against a key: it is wrong only if none opens.
        return not self.tokens or any(box.opens(t) for t in self.tokens)


async def key_proof(conn: asyncpg.Pool | asyncpg.Connection) -> KeyProof:
    """The key check, or the tokens to try a key on where there is none yet."""
    check = await conn.fetchval(KEY_CHECK)
    if check is not None:
        return KeyProof(check, [])
    return KeyProof(None, [r["token_enc"] for r in await conn.fetch(SOME_TOKENS)])


@dataclass(frozen=True, slots=True)
class ActiveBot:
    """An active bot with its decrypted token, as a worker holds it."""

    info: BotInfo
    # Kept out of repr: a logged or printed ActiveBot must not carry the token.
    token: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class BotLink:
    """What a bot's sender and poller are made from: the database, the bot, the Bot API,
    wake-ups, and what to do when Telegram refuses the bot's token."""

    pool: asyncpg.Pool
    bot: ActiveBot
    api: BotApi
    notifier: Notifier
    on_refused: Callable[[int], Awaitable[None]]


class BotJob:
    """A loop that works for one bot (its sender, its poller), talking to Telegram as it."""

    def __init__(self, link: BotLink) -> None:
        self.pool = link.pool
        self.bot = link.bot
        self.telegram = link.api.bot(link.bot.token)
        self.notifier = link.notifier
        self.on_refused = link.on_refused


def secret_hash(secret: str) -> bytes:
    """What is stored of a webhook secret."""
    return hashlib.sha256(secret.encode()).digest()


# eq=False compares by identity; repr=False keeps the token box out of any repr.
@dataclass(eq=False, repr=False)
class BotService:
    """The engine-level operations on bots (the owner API puts them behind HTTP)."""

    pool: asyncpg.Pool
    api: BotApi
    box: TokenBox
    public_url: str | None
    notifier: Notifier | None = None
    # What the features handle, asked for when a webhook is set and on every poll.
    allowed_updates: Callable[[], list[str]] = field(default=list, kw_only=True)

    def default_mode(self) -> str:
        """Webhooks when there is a public URL, long polling otherwise."""
        return "webhook" if self.public_url else "polling"

    async def add(self, token: str, mode: str | None = None) -> dict[str, Any]:
        """Check the token live with getMe, store it encrypted, set up webhook or polling."""
        token = token.strip()
        try:
            bot_id = bot_id_of(token)
        except TokenError as exc:
            raise BotTokenMalformed(str(exc)) from None
        mode = mode or self.default_mode()
        if mode == "webhook" and not self.public_url:
            raise WebhookUnavailable(
                "webhook mode needs SPONSORBOT_PUBLIC_URL; choose polling or set it"
            )
        telegram = self.api.bot(token)
        try:
            me = await telegram.get_me()
        except Unauthorized:
            raise BotTokenRefused("Telegram refused this token (401 Unauthorized)") from None
        except TelegramError as exc:
            raise BotTokenRefused(f"Telegram did not accept the token: {exc.description}") from None
        if me.get("id") != bot_id:
            raise BotTokenRefused("Telegram answered for a different bot than the token names")
        path = secrets.token_urlsafe(24)
        secret = secrets.token_urlsafe(32)
        inserted = await self.pool.fetchval(
            INSERT_BOT,
            bot_id,
            str(me.get("username", "")),
            self.box.seal(token),
            tail(token),
            mode,
            path,
            secret_hash(secret),
        )
        if inserted is None:
            raise BotExists(f"@{me.get('username')} is already connected")
        # The row is ours (just inserted) and nobody was told yet: on a refusal it goes again,
        # so no bot is left stored as `webhook` with Telegram delivering nowhere.
        try:
            await self._connect(bot_id, token, mode, path, secret)
        except BaseException:
            await self.pool.execute(DELETE_BOT, bot_id)
            raise
        self._changed()
        return await self.get(bot_id)

    async def _connect(self, bot_id: int, token: str, mode: str, path: str, secret: str) -> None:
        """setWebhook or deleteWebhook; a refusal is a WebhookRefused saying what Telegram said."""
        telegram = self.api.bot(token)
        try:
            if mode == "webhook":
                await telegram.set_webhook(
                    f"{self.public_url}/tg/{path}",
                    secret_token=secret,
                    allowed_updates=self.allowed_updates(),
                    max_connections=40,
                )
            else:
                await telegram.delete_webhook()
        except TelegramError as exc:
            what = "the webhook" if mode == "webhook" else "removing the webhook"
            log.warning("bot %s: Telegram refused %s: %s", bot_id, what, exc)
            raise WebhookRefused(f"Telegram refused {what}: {exc.description}") from None

    async def get(self, bot_id: int) -> dict[str, Any]:
        """One bot's public fields (never the token)."""
        row = await self.pool.fetchrow(ONE_BOT, bot_id)
        if row is None:
            raise BotNotFound(f"no bot with id {bot_id}")
        return dict(row)

    async def all(self) -> list[dict[str, Any]]:
        """All bots' public fields, oldest first."""
        rows = await self.pool.fetch(ALL_BOTS)
        return [dict(r) for r in rows]

    async def token(self, bot_id: int) -> str:
        """The decrypted token of a bot (for the engine's own calls only)."""
        row = await self.pool.fetchrow(BOT_TOKEN, bot_id)
        if row is None:
            raise BotNotFound(f"no bot with id {bot_id}")
        return self.box.open(row["token_enc"])

    async def pause(self, bot_id: int) -> dict[str, Any]:
        """Stop taking and sending updates for a bot; its webhook is removed."""
        token = await self.token(bot_id)
        await self.pool.execute(SET_STATUS, bot_id, "paused")
        try:
            await self.api.bot(token).delete_webhook()
        except TelegramError as exc:
            log.warning("bot %s paused, but deleteWebhook failed: %s", bot_id, exc)
        self._changed()
        return await self.get(bot_id)

    async def resume(self, bot_id: int) -> dict[str, Any]:
        """Serve a paused bot again (a refused token is checked again first)."""
        token = await self.token(bot_id)
        row = await self.pool.fetchrow(BOT_TOKEN, bot_id)
        assert row is not None
        try:
            await self.api.bot(token).get_me()
        except Unauthorized:
            await self.pool.execute(SET_STATUS, bot_id, "token_refused")
            raise BotTokenRefused("Telegram still refuses this bot's token") from None
        secret = secrets.token_urlsafe(32)
        await self.pool.execute(SET_SECRET, bot_id, secret_hash(secret))
        await self._connect(bot_id, token, row["mode"], row["webhook_path"], secret)
        await self.pool.execute(SET_STATUS, bot_id, "active")
        self._changed()
        return await self.get(bot_id)

    async def replace_token(self, bot_id: int, token: str) -> dict[str, Any]:
        """Store a new token of the same bot (the old one was revoked in @BotFather), checked
        live first; a bot stopped for a refused token is served again."""
        token = token.strip()
        try:
            named = bot_id_of(token)
        except TokenError as exc:
            raise BotTokenMalformed(str(exc)) from None
        bot = await self.get(bot_id)
        if named != bot_id:
            raise BotTokenRefused("this token is for another bot")
        try:
            await self.api.bot(token).get_me()
        except Unauthorized:
            raise BotTokenRefused("Telegram refused this token (401 Unauthorized)") from None
        except TelegramError as exc:
            raise BotTokenRefused(f"Telegram did not accept the token: {exc.description}") from None
        await self.pool.execute(SET_TOKEN, bot_id, self.box.seal(token), tail(token))
        if bot["status"] == "token_refused":
            return await self.resume(bot_id)
        self._changed()
        return await self.get(bot_id)

    async def set_mode(self, bot_id: int, mode: str) -> dict[str, Any]:
        """Switch between webhook and long polling."""
        if mode == "webhook" and not self.public_url:
            raise WebhookUnavailable("webhook mode needs SPONSORBOT_PUBLIC_URL")
        token = await self.token(bot_id)
        old = await self.pool.fetchrow(BOT_MODE, bot_id)
        if old is None:
            raise BotNotFound(f"no bot with id {bot_id}")
        secret = secrets.token_urlsafe(32)
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute(SET_SECRET, bot_id, secret_hash(secret))
            await conn.execute(SET_MODE, bot_id, mode)
        try:
            await self._connect(bot_id, token, mode, old["webhook_path"], secret)
        except BaseException:
            # Telegram still has the old setting: so must the database.
            await self.pool.execute(
                RESTORE_MODE, bot_id, old["mode"], bytes(old["webhook_secret_hash"])
            )
            raise
        self._changed()
        return await self.get(bot_id)

    async def remove(self, bot_id: int) -> None:
        """Delete the webhook and the bot with everything queued for it."""
        token = await self.token(bot_id)
        try:
            await self.api.bot(token).delete_webhook()
        except TelegramError as exc:
            log.warning("removing bot %s: deleteWebhook failed: %s", bot_id, exc)
        await self.pool.execute(DELETE_BOT, bot_id)
        self._changed()

    async def mark_token_refused(self, bot_id: int) -> None:
        """Telegram answered 401: stop everything for this bot until the owner acts."""
        await self.pool.execute(SET_STATUS, bot_id, "token_refused")
        log.warning("bot %s: Telegram refused its token; sender and poller stop", bot_id)
        self._changed()

    async def active(self) -> list[ActiveBot]:
        """Active bots with their tokens decrypted.

        A token that cannot be decrypted leaves its bot out, marked `token_unreadable`, and
        the others are served; once it opens again (the right key is back) the mark goes.
        """
        bots = []
        for r in await self.pool.fetch(ACTIVE_BOTS):
            try:
                token = self.box.open(r["token_enc"])
            except TokenError as exc:
                if await self.pool.fetchval(SET_PROBLEM, r["id"], "token_unreadable"):
                    log.error("bot %s is not served: %s", r["id"], exc)
                continue
            if r["problem"] == "token_unreadable":
                await self.pool.execute(CLEAR_PROBLEM, r["id"], "token_unreadable")
            bots.append(ActiveBot(BotInfo(r["id"], r["username"], r["mode"], r["status"]), token))
        return bots

    async def set_problem(self, bot_id: int, problem: str | None, was: str | None = None) -> bool:
        """Show `problem` beside the bot's status, or clear `was`; True when it changed."""
        if problem is None:
            return bool(await self.pool.fetchval(CLEAR_PROBLEM, bot_id, was))
        return bool(await self.pool.fetchval(SET_PROBLEM, bot_id, problem))

    async def check_key(self) -> None:
        """Refuse a key that cannot open what the database holds (KeyMismatch, one line).

        The first start writes the check value, after making sure a stored token (if any)
        opens. With an old key listed after the new one, everything is sealed again with the
        new one, so the old one can then be dropped.
        """
        proof = await key_proof(self.pool)
        sealed = proof.check
        if sealed is None:
            if not proof.opened_by(self.box):
                raise KeyMismatch(KEY_MISMATCH)
            # Any text does: only whether it opens matters.
            await self.pool.execute(WRITE_KEY_CHECK, self.box.seal("sponsorbot-key-check"))
            # Two processes starting at once with different keys: one of them loses here.
            sealed = await self.pool.fetchval(KEY_CHECK)
        if not self.box.opens(sealed):
            raise KeyMismatch(KEY_MISMATCH)
        if self.box.rotating:
            await self._reseal(sealed)

    async def _reseal(self, sealed: bytes) -> None:
        await self.pool.execute(RESEAL_KEY_CHECK, self.box.reseal(sealed))
        for row in await self.pool.fetch(ALL_TOKENS):
            try:
                new = self.box.reseal(row["token_enc"])
            except TokenError:
                continue  # left as it is; active() marks the bot token_unreadable
            await self.pool.execute(RESEAL_TOKEN, row["id"], new, row["token_enc"])
        log.info("bot tokens sealed again with the first SPONSORBOT_SECRET_KEY")

    def _changed(self) -> None:
        if self.notifier is not None:
            self.notifier.wake(BOTS_CHANGED)
