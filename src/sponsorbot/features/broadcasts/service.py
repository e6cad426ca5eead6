"""Broadcasts for the owner: write a post, choose an audience, preview it, send it now or at a
set time, pause, resume or cancel, and read the progress and the report."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import asyncpg

from sponsorbot.db.pool import on_citus
from sponsorbot.engine.notify import Notifier
from sponsorbot.engine.outbox import background_key
from sponsorbot.features.broadcasts import queries
from sponsorbot.features.broadcasts.post import Post, build
from sponsorbot.features.broadcasts.rules import EDITABLE, MOVES, STOPPED, Status, can
from sponsorbot.features.content.service import upload_to_storage
from sponsorbot.features.errors import Code, Conflict, Invalid, NotFound, Refused
from sponsorbot.features.service import OwnerService, Record
from sponsorbot.telegram import TelegramError

log = logging.getLogger(__name__)

MAX_TITLE = 200
MAX_ACTIVE_DAYS = 3650
LANGUAGES = ("en", "fa")
# What Telegram charges a paid broadcast (allow_paid_broadcast) for each message above the free
# rate, in Stars from the bot's balance.
STARS_A_MESSAGE = 0.1


@dataclass(frozen=True, slots=True)
class Audience:
    """Who gets a broadcast: everyone who started the bot and has not blocked it, narrowed by
    the filters that are set."""

    active_days: int | None = None
    language: str | None = None
    campaign_id: int | None = None
    passed: bool = False

    def args(self) -> tuple[Any, ...]:
        """The filters as the AUDIENCE SQL's $2..$5."""
        return (self.active_days, self.language, self.campaign_id, self.passed)

    def as_json(self) -> dict[str, Any]:
        """The audience as stored."""
        return {
            "active_days": self.active_days,
            "language": self.language,
            "campaign_id": self.campaign_id,
            "passed": self.passed,
        }

    @classmethod
    def of_json(cls, data: dict[str, Any]) -> Audience:
        """A stored audience back."""
        return cls(
            data.get("active_days"),
            data.get("language"),
            data.get("campaign_id"),
            bool(data.get("passed")),
        )


def check_audience(audience: Audience) -> Audience:
    """The audience, or Invalid for a filter that cannot be used."""
    if audience.active_days is not None and not 1 <= audience.active_days <= MAX_ACTIVE_DAYS:
        raise Invalid(f"active within 1 to {MAX_ACTIVE_DAYS} days", code=Code.AUDIENCE)
    if audience.language is not None and audience.language not in LANGUAGES:
        raise Invalid(f"the language is one of {', '.join(LANGUAGES)}", code=Code.AUDIENCE)
    return audience


@dataclass(frozen=True, slots=True)
class Draft:
    """What an owner sets on a broadcast."""

    title: str
    post: Post
    audience: Audience = Audience()


@dataclass(frozen=True, slots=True)
class Progress(Record):
    """The figures of `progress()` for the progress bar: done of total, the percent, the rate
    per second since the start and the seconds left at that rate (None until it sends)."""

    done: int
    total: int
    percent: float
    rate_per_s: float | None
    seconds_left: int | None


@dataclass(frozen=True, slots=True)
class Failure(Record):
    """One reason recipients did not get it, and how many: `blocked` (the bot), `failed`
    (Telegram's description) or `unknown` (a worker stopped while sending it)."""

    status: str
    error: str
    n: int


@dataclass(frozen=True, slots=True)
class Broadcast(Record):
    """A broadcast as the owner reads it: the post (as stored and as the call it makes), its
    audience, where it stands, its counts and progress, what a paid one costs at most, and
    (read alone, once anything failed) why."""

    id: int
    bot_id: int
    title: str
    method: str
    params: dict[str, Any]
    post: dict[str, Any]
    audience: dict[str, Any]
    paid: bool
    status: Status
    pause_reason: str | None
    scheduled_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    chosen: bool
    estimated: int
    recipients: int
    queued: int
    sent: int
    blocked: int
    failed: int
    unknown: int
    created_by: str
    created_at: datetime
    updated_at: datetime
    progress: Progress
    estimated_stars: float | None
    failures: tuple[Failure, ...] = ()

    @classmethod
    def of(cls, row: dict[str, Any]) -> Broadcast:
        """A broadcast from its row with `progress`, `estimated_stars` and maybe `failures`."""
        values = cls.values_of(row)
        values["status"] = Status(row["status"])
        values["progress"] = Progress(**row["progress"])
        values["failures"] = tuple(Failure(**failure) for failure in row.get("failures", ()))
        return cls(**values)


def progress(row: dict[str, Any], now: datetime) -> dict[str, Any]:
    """Figures for the progress bar: done, percent, rate per second, seconds left."""
    done = row["sent"] + row["blocked"] + row["failed"] + row["unknown"]
    total = row["recipients"] if row["chosen"] else max(row["estimated"], row["recipients"])
    percent = 100.0 if row["status"] == Status.DONE else (100.0 * done / total if total else 0.0)
    rate = None
    left = None
    started = row["started_at"]
    if started is not None and row["status"] == Status.SENDING and done:
        elapsed = (now - started).total_seconds()
        if elapsed > 0:
            rate = done / elapsed
            left = max(0.0, (total - done) / rate)
    return {
        "done": done,
        "total": total,
        "percent": round(min(percent, 100.0), 1),
        "rate_per_s": None if rate is None else round(rate, 2),
        "seconds_left": None if left is None else round(left),
    }


def stars_for(people: int) -> float:
    """About what a paid broadcast to this many people costs in Telegram Stars: the most it can,
    since only the messages above the free rate are paid."""
    return round(people * STARS_A_MESSAGE, 1)


@dataclass(eq=False, repr=False)
class BroadcastService(OwnerService):
    """The owner's broadcasts, over the database and the Bot API."""

    notifier: Notifier
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    # Whether the database is a Citus coordinator, asked at the first count.
    _citus: bool | None = field(default=None, init=False)

    async def audience_count(self, bot_id: int, audience: Audience) -> int:
        """How many people the audience holds right now."""
        await self.bots.get(bot_id)
        check_audience(audience)
        return await self._count(bot_id, audience.args())

    async def _count(self, bot_id: int, audience: tuple[Any, ...]) -> int:
        """COUNT_AUDIENCE, in its Citus form on a Citus coordinator."""
        if self._citus is None:
            self._citus = await on_citus(self.pool)
        sql = queries.COUNT_AUDIENCE_CITUS if self._citus else queries.COUNT_AUDIENCE
        count: int = await self.pool.fetchval(sql, bot_id, *audience)
        return count

    def _fields(self, draft: Draft) -> tuple[Any, ...]:
        """The draft, checked, as the INSERT and UPDATE_DRAFT columns $2..$7."""
        title = draft.title.strip()
        if not title:
            raise Invalid("the broadcast needs a title", code=Code.BROADCAST_TITLE)
        if len(title) > MAX_TITLE:
            raise Invalid(
                f"the title is longer than {MAX_TITLE} characters", code=Code.BROADCAST_TITLE
            )
        check_audience(draft.audience)
        call = build(draft.post)
        post, audience = draft.post.as_json(), draft.audience.as_json()
        return (title, call.method, call.params, post, audience, draft.post.paid)

    async def create(self, bot_id: int, draft: Draft, created_by: str) -> Broadcast:
        """Save a draft (nothing is sent until `send`)."""
        await self.bots.get(bot_id)
        fields = self._fields(draft)
        broadcast_id: int = await self.pool.fetchval(queries.INSERT, bot_id, *fields, created_by)
        return await self.get(bot_id, broadcast_id)

    async def change(self, bot_id: int, broadcast_id: int, draft: Draft) -> Broadcast:
        """Change a draft or a scheduled broadcast; 409 once it has started."""
        fields = self._fields(draft)
        done = await self.pool.fetchval(queries.UPDATE_DRAFT, bot_id, *fields, broadcast_id)
        if done is None:
            await self._status(bot_id, broadcast_id)
            raise Conflict("a broadcast cannot be changed once it has started", code=Code.STARTED)
        return await self.get(bot_id, broadcast_id)

    async def delete(self, bot_id: int, broadcast_id: int) -> None:
        """Delete a draft; 409 for anything else (a sent broadcast keeps its report)."""
        done: str = await self.pool.execute(queries.DELETE_DRAFT, bot_id, broadcast_id)
        if done.endswith(" 0"):
            await self._status(bot_id, broadcast_id)
            raise Conflict("only a draft can be deleted", code=Code.NOT_DRAFT)

    async def get(self, bot_id: int, broadcast_id: int) -> Broadcast:
        """One broadcast with its progress and, once anything failed, why."""
        row = await self.pool.fetchrow(queries.ONE, bot_id, broadcast_id)
        if row is None:
            await self.bots.get(bot_id)
            raise NotFound("no such broadcast")
        out = await self._costed(self._out(row))
        failures = []
        if out["blocked"] or out["failed"] or out["unknown"]:
            failures = [dict(r) for r in await self.pool.fetch(queries.FAILURES, broadcast_id)]
        out["failures"] = failures
        return Broadcast.of(out)

    def _out(self, row: asyncpg.Record) -> dict[str, Any]:
        out = dict(row)
        out["progress"] = progress(out, self.clock())
        return out

    async def _costed(self, out: dict[str, Any]) -> dict[str, Any]:
        """The broadcast with `estimated_stars` (None unless paid), shown before it is sent
        (ADR 0007): its audience counted now until it starts, then the one it goes to."""
        people = out["progress"]["total"]
        if out["paid"] and out["status"] in EDITABLE:
            audience = Audience.of_json(out["audience"]).args()
            people = await self._count(out["bot_id"], audience)
        out["estimated_stars"] = stars_for(people) if out["paid"] else None
        return out

    async def page(
        self, bot_ids: list[int], status: str | None, limit: int, offset: int
    ) -> tuple[list[Broadcast], int]:
        """Broadcasts of these bots, newest first, and how many there are."""
        rows = await self.pool.fetch(queries.PAGE, bot_ids, status, limit, offset)
        total: int = await self.pool.fetchval(queries.COUNT_PAGE, bot_ids, status)
        return [Broadcast.of(await self._costed(self._out(r))) for r in rows], total

    async def _status(self, bot_id: int, broadcast_id: int) -> str:
        status: str | None = await self.pool.fetchval(
            "SELECT status FROM broadcasts WHERE bot_id = $1 AND id = $2", bot_id, broadcast_id
        )
        if status is None:
            await self.bots.get(bot_id)
            raise NotFound("no such broadcast")
        return status

    async def _move(
        self,
        bot_id: int,
        broadcast_id: int,
        move: str,
        reason: str | None = None,
        at: datetime | None = None,
    ) -> None:
        """Make one of the owner's MOVES, taking back unclaimed rows when sending stops; 409
        from a status the move does not start from."""
        came_from, to = MOVES[move]
        async with self.pool.acquire() as conn, conn.transaction():
            status = await conn.fetchval(queries.LOCK, bot_id, broadcast_id)
            if status is None:
                await self.bots.get(bot_id)
                raise NotFound("no such broadcast")
            if not can(move, status):
                raise Conflict(f"the broadcast is {status}: it cannot be {to}", code=status)
            await conn.execute(
                queries.SET_STATUS, bot_id, broadcast_id, to, reason, at, list(came_from)
            )
            if to in STOPPED:
                await conn.execute(queries.WITHDRAW, broadcast_id)
                await conn.execute(queries.RESCAN, broadcast_id)

    async def send(self, bot_id: int, broadcast_id: int, at: datetime | None = None) -> Broadcast:
        """Send a draft now, or at `at`; a scheduled one can be moved or sent now."""
        now = self.clock()
        if at is not None:
            if at.tzinfo is None:
                raise Invalid("the time needs a time zone (for example 2026-12-01T18:00:00Z)")
            if at <= now:
                raise Invalid("the scheduled time is in the past", code=Code.SCHEDULE_PAST)
        await self._move(bot_id, broadcast_id, "send", at=at or now)
        return await self.get(bot_id, broadcast_id)

    async def pause(self, bot_id: int, broadcast_id: int, reason: str = "owner") -> Broadcast:
        """Stop sending (what a sender already claimed still goes, a second at most)."""
        await self._move(bot_id, broadcast_id, "pause", reason)
        return await self.get(bot_id, broadcast_id)

    async def resume(self, bot_id: int, broadcast_id: int) -> Broadcast:
        """Go on from where it stopped."""
        await self._move(bot_id, broadcast_id, "resume")
        return await self.get(bot_id, broadcast_id)

    async def cancel(self, bot_id: int, broadcast_id: int) -> Broadcast:
        """Stop for good: whoever has not had it yet does not get it. 409 once finished."""
        await self._move(bot_id, broadcast_id, "cancel")
        return await self.get(bot_id, broadcast_id)

    async def preview(self, bot_id: int, post: Post, telegram_id: int | None) -> None:
        """Send the post now to one person (the member's own Telegram id)."""
        if telegram_id is None:
            raise Invalid(
                "set your Telegram id in your account first: the preview is sent there",
                code=Code.NO_TELEGRAM_ID,
            )
        call = build(post)
        telegram = await self._telegram(bot_id)
        try:
            await telegram.call(call.method, {**call.params, "chat_id": telegram_id})
        except TelegramError as exc:
            if exc.is_transient:
                raise
            raise Refused(
                f"Telegram refused the preview: {exc.description} (start the bot from that "
                "account first)",
                code=Code.PREVIEW_REFUSED,
                telegram=exc.description,
            ) from None

    async def upload(
        self, bot_id: int, kind: str, filename: str, data: bytes, content_type: str
    ) -> dict[str, str]:
        """Store a file in the bot's storage chat; returns its kind and file_id."""
        item = await upload_to_storage(self, bot_id, kind, filename, data, content_type)
        return {"kind": item["kind"], "file_id": item["file_id"]}

    def wake_sender(self, bot_id: int) -> None:
        """Tell the bot's sender new background rows are queued."""
        self.notifier.wake(background_key(bot_id))
