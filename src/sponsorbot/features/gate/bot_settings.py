"""A bot's gate, texts, uploaders, storage chat and join-request decisions (owner side)."""

from __future__ import annotations

from typing import Any

from sponsorbot.features.channels.service import ensure_invite_link
from sponsorbot.features.errors import Invalid, NotFound, Refused
from sponsorbot.features.service import OwnerService
from sponsorbot.features.texts import DEFAULTS, KEYS, LANGUAGES, text_problem
from sponsorbot.telegram import TelegramError

GATE = """
SELECT g.chat_id, g.position, g.request_counts, c.title, c.username, c.status, c.missing
FROM gate_channels g JOIN channels c ON c.bot_id = g.bot_id AND c.chat_id = g.chat_id
WHERE g.bot_id = $1 ORDER BY g.position
"""
ENSURE_SETTINGS = "INSERT INTO bot_settings (bot_id) VALUES ($1) ON CONFLICT DO NOTHING"
SET_TEXTS = "UPDATE bot_settings SET texts = $2, updated_at = now() WHERE bot_id = $1"
SET_STORAGE_CHAT = (
    "UPDATE bot_settings SET storage_chat_id = $2, updated_at = now() WHERE bot_id = $1"
)
DELETE_UPLOADER = "DELETE FROM uploaders WHERE bot_id = $1 AND user_id = $2"
MAX_GATE = 10


class BotSettingsService(OwnerService):
    """The owner's settings of one bot's gate feature."""

    async def gate(self, bot_id: int) -> list[dict[str, Any]]:
        """The gate's channels in order."""
        await self.bots.get(bot_id)
        return [dict(r) for r in await self.pool.fetch(GATE, bot_id)]

    async def set_gate(self, bot_id: int, entries: list[tuple[int, bool]]) -> list[dict[str, Any]]:
        """Replace the gate with these (chat_id, request_counts) in this order."""
        await self.bots.get(bot_id)
        ids = [chat_id for chat_id, _ in entries]
        if len(set(ids)) != len(ids):
            raise Invalid("a channel appears twice in the gate", code="gate_twice")
        if len(ids) > MAX_GATE:
            raise Invalid(
                f"a gate holds at most {MAX_GATE} channels", code="gate_full", most=MAX_GATE
            )
        rows = await self.pool.fetch(
            "SELECT chat_id, username FROM channels WHERE bot_id = $1 AND chat_id = ANY($2)",
            bot_id,
            ids,
        )
        known = {r["chat_id"]: r["username"] for r in rows}
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise NotFound(
                "add these channels to the bot first: " + ", ".join(map(str, unknown)),
                code="unknown_channels",
                channel_ids=unknown,
            )
        private = [(c, r) for c, r in entries if known[c] is None]
        if private:
            telegram = await self._telegram(bot_id)
            for chat_id, counts in private:
                # A private channel's link must create join requests when requests count.
                await ensure_invite_link(self.pool, telegram, bot_id, chat_id, counts)
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute("DELETE FROM gate_channels WHERE bot_id = $1", bot_id)
            await conn.executemany(
                "INSERT INTO gate_channels (bot_id, chat_id, position, request_counts) "
                "VALUES ($1, $2, $3, $4)",
                [(bot_id, c, i, r) for i, (c, r) in enumerate(entries)],
            )
        self.config.invalidate(bot_id)
        return await self.gate(bot_id)

    async def texts(self, bot_id: int) -> dict[str, Any]:
        """The owner's overrides and the defaults they replace."""
        await self.bots.get(bot_id)
        texts = await self.pool.fetchval("SELECT texts FROM bot_settings WHERE bot_id = $1", bot_id)
        return {"overrides": texts or {}, "defaults": DEFAULTS}

    async def set_texts(self, bot_id: int, overrides: dict[str, dict[str, str]]) -> dict[str, Any]:
        """Replace the overrides; an empty string or a missing key means "use the default"."""
        await self.bots.get(bot_id)
        clean: dict[str, dict[str, str]] = {}
        problems: dict[str, dict[str, Any]] = {}
        for language, texts in overrides.items():
            if language not in LANGUAGES:
                raise Invalid(f"texts exist in {', '.join(LANGUAGES)}, not {language!r}")
            for key, text in texts.items():
                if key not in KEYS:
                    raise Invalid(f"no text is called {key!r}", known=sorted(KEYS))
                problem = text_problem(key, text)
                if problem is not None:
                    problems[f"{language}.{key}"] = problem
                elif text:
                    clean.setdefault(language, {})[key] = text
        if problems:
            raise Invalid(_problems_message(problems), code="texts_invalid", fields=problems)
        await self._update(bot_id, SET_TEXTS, clean)
        return await self.texts(bot_id)

    async def storage_chat(self, bot_id: int) -> int | None:
        """Where API uploads go."""
        value = await self.pool.fetchval(
            "SELECT storage_chat_id FROM bot_settings WHERE bot_id = $1", bot_id
        )
        return int(value) if value is not None else None

    async def set_storage_chat(self, bot_id: int, chat_id: int | None) -> None:
        """Set (or clear) the storage chat."""
        await self.bots.get(bot_id)
        await self._update(bot_id, SET_STORAGE_CHAT, chat_id)

    async def _update(self, bot_id: int, sql: str, value: Any) -> None:
        """Write one of the bot's settings (SET_TEXTS, SET_STORAGE_CHAT), its row made first
        if it has none, and drop the cached config that still holds the old one."""
        await self.pool.execute(ENSURE_SETTINGS, bot_id)
        await self.pool.execute(sql, bot_id, value)
        self.config.invalidate(bot_id)

    async def uploaders(self, bot_id: int) -> list[dict[str, Any]]:
        """Telegram users who may upload by sending files to the bot."""
        await self.bots.get(bot_id)
        rows = await self.pool.fetch(
            "SELECT user_id, note, added_at FROM uploaders WHERE bot_id = $1 ORDER BY added_at",
            bot_id,
        )
        return [dict(r) for r in rows]

    async def add_uploader(self, bot_id: int, user_id: int, note: str | None) -> dict[str, Any]:
        """Allow a Telegram user to upload (adding twice updates the note)."""
        await self.bots.get(bot_id)
        row = await self.pool.fetchrow(
            "INSERT INTO uploaders (bot_id, user_id, note) VALUES ($1, $2, $3) "
            "ON CONFLICT (bot_id, user_id) DO UPDATE SET note = excluded.note "
            "RETURNING user_id, note, added_at",
            bot_id,
            user_id,
            note,
        )
        self.config.invalidate(bot_id)
        return dict(row)

    async def remove_uploader(self, bot_id: int, user_id: int) -> None:
        """Stop a Telegram user from uploading."""
        missing = f"{user_id} is not an uploader of this bot"
        await self._change_one(DELETE_UPLOADER, bot_id, user_id, missing)

    async def decide_request(self, bot_id: int, chat_id: int, user_id: int, approve: bool) -> None:
        """Approve or decline a join request through the bot, and record the outcome."""
        token = await self.bots.token(bot_id)
        telegram = self.api.bot(token)
        try:
            if approve:
                await telegram.approve_chat_join_request(chat_id, user_id)
            else:
                await telegram.decline_chat_join_request(chat_id, user_id)
        except TelegramError as exc:
            if exc.is_transient:
                raise
            raise Refused(
                f"Telegram refused: {exc.description}", telegram=exc.description
            ) from None
        if approve:
            await self.pool.execute(
                "DELETE FROM join_requests WHERE bot_id = $1 AND user_id = $2 AND chat_id = $3",
                bot_id,
                user_id,
                chat_id,
            )
        else:
            await self.pool.execute(
                "INSERT INTO join_requests (bot_id, chat_id, user_id, status) "
                "VALUES ($1, $2, $3, 'declined') ON CONFLICT (bot_id, user_id, chat_id) "
                "DO UPDATE SET status = 'declined', updated_at = excluded.updated_at",
                bot_id,
                chat_id,
                user_id,
            )


def _problems_message(problems: dict[str, dict[str, Any]]) -> str:
    """The texts that cannot be used, in one line for the API."""
    parts = []
    for field, problem in problems.items():
        if problem["problem"] == "too_long":
            parts.append(f"{field} is longer than {problem['limit']} characters")
        elif problem["problem"] == "unbalanced":
            parts.append(f"{field} has an unbalanced {{ or }} (write {{{{ and }}}} for braces)")
        else:
            allowed = ", ".join("{" + name + "}" for name in problem["allowed"]) or "none"
            parts.append(f"{field} may use only these placeholders: {allowed}")
    return "texts cannot be used: " + "; ".join(parts)
