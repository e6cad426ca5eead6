"""Campaigns for the owner: create (checked live in every bot), change, pause, resume, end,
read with their figures, and the sponsor's report link."""

from __future__ import annotations

import asyncio
import logging
import secrets
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from sponsorbot.features.accounts.workspace import load as load_workspace
from sponsorbot.features.campaigns import queries
from sponsorbot.features.campaigns.queries import Campaign, Hour
from sponsorbot.features.campaigns.rules import (
    FINISHED,
    GOAL_KINDS,
    MOVES,
    POSITIONS,
    STATUSES,
    Counts,
    Status,
)
from sponsorbot.features.channels.service import (
    REQUIRED_RIGHT,
    UPSERT,
    ChannelCheck,
    inspect,
    parse_ref,
    refusal,
)
from sponsorbot.features.errors import Code, Conflict, Invalid, NotFound
from sponsorbot.features.service import OwnerService
from sponsorbot.telegram import Bot, TelegramError

log = logging.getLogger(__name__)

TELEGRAM_NAME = 32  # createChatInviteLink's name limit
MAX_NAME = 200
MAX_RETENTION_HOURS = 24 * 90

INSERT = """
INSERT INTO campaigns (name, chat_id, chat_title, chat_username, join_requests, goal_joins,
                       goal_kind, starts_at, ends_at, retention, position, status, report_token,
                       created_by)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, make_interval(hours => $10), $11, $12, $13, $14)
RETURNING id
"""
INSERT_LINK = "INSERT INTO campaign_bots (campaign_id, bot_id, invite_link) VALUES ($1, $2, $3)"
# Another campaign still to run on the same channel through one of the same bots.
OVERLAP = """
SELECT c.id, c.name FROM campaigns c JOIN campaign_bots b ON b.campaign_id = c.id
WHERE c.chat_id = $1 AND b.bot_id = ANY($2::bigint[]) AND c.status NOT IN ('reached', 'ended')
  AND c.id <> $3
LIMIT 1
"""
UPDATE = """
UPDATE campaigns SET name = $2, goal_joins = $3, goal_kind = $4, ends_at = $5,
    retention = make_interval(hours => $6), position = $7, updated_at = now()
WHERE id = $1
"""
# A status change only from the states it may come from: two hands cannot both end it.
SET_STATUS = """
UPDATE campaigns SET status = $2, status_at = $3, updated_at = now()
WHERE id = $1 AND status = ANY($4::text[])
RETURNING id
"""
SET_TOKEN = "UPDATE campaigns SET report_token = $2, updated_at = now() WHERE id = $1"
BOT_IDS = "SELECT bot_id FROM campaign_bots WHERE campaign_id = $1 ORDER BY bot_id"
# The channels a campaign may be offered: those a bot was added to (with the rights found at
# its last check) and those of earlier campaigns (whose bots had the rights then).
KNOWN_CHANNELS = """
SELECT chat_id, title, username, bot_id, status = 'ok' AS ok, missing
  FROM channels WHERE chat_type = 'channel'
UNION ALL
SELECT c.chat_id, c.chat_title, c.chat_username, b.bot_id, true, '{}'::text[]
  FROM campaigns c JOIN campaign_bots b ON b.campaign_id = c.id
 WHERE NOT EXISTS (SELECT 1 FROM channels h WHERE h.chat_id = c.chat_id AND h.bot_id = b.bot_id)
"""
OPEN_LINKS = """
SELECT b.bot_id, b.invite_link, c.chat_id FROM campaign_bots b
JOIN campaigns c ON c.id = b.campaign_id
WHERE b.campaign_id = $1 AND b.revoked_at IS NULL
"""
LINK_REVOKED = """
UPDATE campaign_bots SET revoked_at = now() WHERE campaign_id = $1 AND bot_id = $2
"""


@dataclass(frozen=True, slots=True)
class Draft:
    """What an owner sets on a campaign (creating it, or changing it)."""

    name: str
    channel: str = ""
    bot_ids: tuple[int, ...] = ()
    goal_joins: int | None = None
    goal_kind: str = "kept"
    starts_at: datetime | None = None
    ends_at: datetime | None = None
    retention_hours: int = 24
    position: str = "first"
    # Links that create join requests: None follows the chat (getChat's join_by_request).
    join_requests: bool | None = None


@dataclass(frozen=True, slots=True)
class Report:
    """What a sponsor's page shows: the campaign read whole, its joins and leaves per hour, and
    the workspace's time zone the hours are counted in."""

    campaign: Campaign
    hours: tuple[Hour, ...]
    time_zone: str


def check_draft(draft: Draft, now: datetime, *, creating: bool) -> Draft:
    """The draft with its name trimmed; Invalid, with a code, for anything unusable."""
    name = draft.name.strip()
    if not name:
        raise Invalid("the campaign needs a name", code=Code.CAMPAIGN_NAME)
    if len(name) > MAX_NAME:
        raise Invalid(f"the name is longer than {MAX_NAME} characters", code=Code.CAMPAIGN_NAME)
    if draft.goal_joins is not None and draft.goal_joins <= 0:
        raise Invalid("the goal must be at least 1 join (or none)", code=Code.CAMPAIGN_GOAL)
    if draft.goal_kind not in GOAL_KINDS:
        raise Invalid(
            "the goal is counted in 'kept' joins or plain 'joins'", code=Code.CAMPAIGN_GOAL
        )
    if draft.position not in POSITIONS:
        raise Invalid("the position in the gate is 'first' or 'last'", code=Code.CAMPAIGN_POSITION)
    if not 1 <= draft.retention_hours <= MAX_RETENTION_HOURS:
        raise Invalid(
            f"the retention window is 1 to {MAX_RETENTION_HOURS} hours",
            code=Code.CAMPAIGN_RETENTION,
        )
    for value in (draft.starts_at, draft.ends_at):
        if value is not None and value.tzinfo is None:
            raise Invalid("dates need a time zone (for example 2026-12-01T00:00:00Z)")
    starts = draft.starts_at or now
    if draft.ends_at is not None and (draft.ends_at <= now or draft.ends_at <= starts):
        raise Invalid("the end date is in the past (or before the start)", code=Code.CAMPAIGN_ENDS)
    if creating:
        if not draft.bot_ids:
            raise Invalid("choose at least one bot for the campaign", code=Code.CAMPAIGN_BOTS)
        if not draft.channel.strip():
            raise Invalid("name the sponsor's channel", code=Code.CHANNEL_REF)
    return replace(draft, name=name, bot_ids=tuple(dict.fromkeys(draft.bot_ids)))


def link_name(name: str) -> str:
    """The campaign's name as Telegram takes it for a link (32 characters at most)."""
    return name if len(name) <= TELEGRAM_NAME else name[: TELEGRAM_NAME - 1] + "…"


class CampaignService(OwnerService):
    """Everything the panel and the owner API do with campaigns."""

    def clock(self) -> datetime:
        """Now (the tests do not move it; a method so one could)."""
        return datetime.now(UTC)

    async def known_channels(self) -> list[dict[str, Any]]:
        """Channels the bots are known to administer, each once: its id, title, @name and per
        bot whether it has the rights a campaign needs (as last checked), titles in order."""
        found: dict[int, dict[str, Any]] = {}
        for row in await self.pool.fetch(KNOWN_CHANNELS):
            chat = found.setdefault(
                row["chat_id"],
                {"chat_id": row["chat_id"], "title": row["title"], "username": row["username"],
                 "bots": {}},
            )  # fmt: skip
            chat["bots"].setdefault(row["bot_id"], {"ok": row["ok"], "missing": row["missing"]})
        return sorted(found.values(), key=lambda c: str(c["title"]).casefold())

    async def create(self, draft: Draft, created_by: str) -> Campaign:
        """Check the channel in every bot, make one invite link per bot, save, start."""
        now = self.clock()
        draft = check_draft(draft, now, creating=True)
        target = parse_ref(draft.channel)
        bots = {bot_id: await self.bots.get(bot_id) for bot_id in draft.bot_ids}
        telegrams = {bot_id: await self._telegram(bot_id) for bot_id in draft.bot_ids}
        checks = await asyncio.gather(*(inspect(telegrams[b], b, target) for b in draft.bot_ids))
        # Every bot that lacks a right is named at once: fixing one per submit wastes rounds.
        lacking: list[dict[str, Any]] = [
            {
                "bot_id": b,
                "bot": bots[b].username,
                "missing": check.missing,
                "title": check.title,
            }
            for b, check in zip(draft.bot_ids, checks, strict=True)
            if check.missing
        ]
        if lacking:
            first = lacking[0]
            said = "; ".join(
                f"@{row['bot']}: {refusal(str(row['title']), list(row['missing']))}"
                for row in lacking
            )
            raise Invalid(
                said,
                code=Code.RIGHTS_MISSING,
                missing=first["missing"],
                bot_id=first["bot_id"],
                bot=first["bot"],
                bots=lacking,
            )
        chat = checks[0]
        if any(c.chat_id != chat.chat_id for c in checks):
            raise Invalid(
                "the bots see different chats under this reference", code=Code.CHANNEL_REF
            )
        overlap = await self.pool.fetchrow(OVERLAP, chat.chat_id, list(draft.bot_ids), 0)
        if overlap is not None:
            raise Conflict(
                f"campaign “{overlap['name']}” already runs on this channel in one of these bots",
                code=Code.CAMPAIGN_OVERLAP,
                campaign_id=overlap["id"],
                name=overlap["name"],
            )
        if draft.join_requests is not None:
            chat = replace(chat, join_by_request=draft.join_requests)
        names = {bot_id: bot.username for bot_id, bot in bots.items()}
        made = await self._make_links(telegrams, names, chat, draft.name)
        try:
            campaign_id = await self._save(draft, chat, made, created_by, now)
        except BaseException:
            await self._revoke_links(telegrams, chat.chat_id, made)
            raise
        for bot_id in draft.bot_ids:
            self.config.invalidate(bot_id)
        return await self.get(campaign_id)

    async def _make_links(
        self, telegrams: dict[int, Bot], names: dict[int, str], chat: ChannelCheck, name: str
    ) -> dict[int, str]:
        made: dict[int, str] = {}
        for bot_id, telegram in telegrams.items():
            try:
                link = await telegram.create_chat_invite_link(
                    chat.chat_id,
                    name=link_name(name),
                    creates_join_request=chat.join_by_request or None,
                )
            except TelegramError as exc:
                await self._revoke_links(telegrams, chat.chat_id, made)
                if exc.is_transient:
                    raise
                raise Invalid(
                    f"@{names[bot_id]} cannot make an invite link in “{chat.title}” "
                    f"({exc.description}): give it the right {REQUIRED_RIGHT}",
                    code=Code.RIGHTS_MISSING,
                    missing=[REQUIRED_RIGHT],
                    bot_id=bot_id,
                    bot=names[bot_id],
                ) from None
            made[bot_id] = str(link["invite_link"])
        return made

    async def _save(
        self,
        draft: Draft,
        chat: ChannelCheck,
        made: dict[int, str],
        created_by: str,
        now: datetime,
    ) -> int:
        starts = draft.starts_at or now
        status = Status.SCHEDULED if starts > now else Status.RUNNING
        async with self.pool.acquire() as conn, conn.transaction():
            campaign_id: int = await conn.fetchval(
                INSERT,
                draft.name,
                chat.chat_id,
                chat.title,
                chat.username,
                chat.join_by_request,
                draft.goal_joins,
                draft.goal_kind,
                starts,
                draft.ends_at,
                draft.retention_hours,
                draft.position,
                status,
                secrets.token_urlsafe(24),
                created_by,
            )
            for bot_id, link in made.items():
                await conn.execute(INSERT_LINK, campaign_id, bot_id, link)
                await conn.execute(UPSERT, *chat.args(bot_id))
        return campaign_id

    async def _revoke_links(
        self, telegrams: dict[int, Bot], chat_id: int, made: dict[int, str]
    ) -> None:
        for bot_id, link in made.items():
            try:
                await telegrams[bot_id].revoke_chat_invite_link(chat_id, link)
            except TelegramError as exc:
                log.warning("could not revoke a campaign link of bot %s: %s", bot_id, exc)

    async def get(self, campaign_id: int) -> Campaign:
        """One campaign with its figures, links and per-bot breakdown."""
        row = await self.pool.fetchrow(queries.ONE, campaign_id)
        if row is None:
            raise NotFound(f"no campaign {campaign_id}", code=Code.CAMPAIGN_MISSING)
        return Campaign.of(await self._full(dict(row), await self._zone()))

    async def _full(self, campaign: dict[str, Any], zone: str) -> dict[str, Any]:
        await self._figured([campaign], zone)
        await self._linked([campaign])
        per_bot = await queries.by_bot(self.pool, campaign["id"], self.clock())
        for link in campaign["links"]:
            counts = per_bot.get(link["bot_id"], Counts())
            link.update(joins=counts.joins, kept=counts.kept, left=counts.left)
        campaign["by_bot"] = campaign["links"]
        return campaign

    async def page(
        self,
        limit: int,
        offset: int,
        status: str | None = None,
        bot_id: int | None = None,
    ) -> tuple[list[Campaign], int]:
        """A page of campaigns, newest first, with their figures; and how many there are."""
        if status is not None and status not in STATUSES:
            raise Invalid(f"the status is one of {', '.join(STATUSES)}", code=Code.CAMPAIGN_STATUS)
        rows = await self.pool.fetch(queries.PAGE, status, bot_id, limit, offset)
        total = await self.pool.fetchval(queries.TOTAL, status, bot_id)
        campaigns = await self._figured([dict(r) for r in rows], await self._zone())
        return [Campaign.of(c) for c in await self._linked(campaigns)], int(total)

    async def _zone(self) -> str:
        """The workspace's time zone: "today" and the hours are counted in it."""
        return str((await load_workspace(self.pool))["time_zone"])

    async def _figured(self, rows: list[dict[str, Any]], zone: str) -> list[dict[str, Any]]:
        """The rows with their counts, progress and joins today."""
        if not rows:
            return rows
        ids = [int(r["id"]) for r in rows]
        figures = await queries.figures(self.pool, ids, self.clock(), zone)
        for row in rows:
            counts, joins_today = figures.get(int(row["id"]), (Counts(), 0))
            describe(row, counts, joins_today)
        return rows

    async def _linked(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The rows with their bots' invite links."""
        links = await queries.links(self.pool, [int(r["id"]) for r in rows])
        for row in rows:
            row["links"] = links.get(int(row["id"]), [])
        return rows

    async def change(self, campaign_id: int, changes: dict[str, Any]) -> Campaign:
        """Change the name, goal, end date, retention window or position."""
        current = await self.get(campaign_id)
        if current.status in FINISHED:
            raise Conflict("a finished campaign cannot be changed", code=Code.CAMPAIGN_FINISHED)
        fields = {k: v for k, v in changes.items() if k in Draft.__dataclass_fields__}
        draft = Draft(
            name=current.name,
            goal_joins=current.goal_joins,
            goal_kind=current.goal_kind,
            starts_at=current.starts_at,
            ends_at=current.ends_at,
            retention_hours=current.retention_hours,
            position=current.position,
        )
        draft = check_draft(replace(draft, **fields), self.clock(), creating=False)
        await self.pool.execute(
            UPDATE,
            campaign_id,
            draft.name,
            draft.goal_joins,
            draft.goal_kind,
            draft.ends_at,
            draft.retention_hours,
            draft.position,
        )
        await self._invalidate(campaign_id)
        return await self.get(campaign_id)

    async def pause(self, campaign_id: int) -> Campaign:
        """Take the channel out of the gates for now (the links stay valid)."""
        return await self._move(campaign_id, "pause")

    async def resume(self, campaign_id: int) -> Campaign:
        """Put a paused campaign back into its gates."""
        return await self._move(campaign_id, "resume")

    async def end(self, campaign_id: int) -> Campaign:
        """End it now: out of every gate, links revoked."""
        await self._move(campaign_id, "end")
        await self.revoke_links(campaign_id)
        return await self.get(campaign_id)

    async def _move(self, campaign_id: int, move: str) -> Campaign:
        sources, to = MOVES[move]
        current = await self.get(campaign_id)
        if current.status == to:
            return current
        moved = await self.pool.fetchval(SET_STATUS, campaign_id, to, self.clock(), list(sources))
        if moved is None:
            raise Conflict(
                f"a {current.status} campaign cannot be made {to}", code=Code.CAMPAIGN_STATE
            )
        await self._invalidate(campaign_id)
        return await self.get(campaign_id)

    async def finish(self, campaign_id: int, move: str, at: datetime) -> bool:
        """The periodic job's move to reached or ended ("reach" or "end"); False when someone
        was first."""
        sources, to = MOVES[move]
        moved = await self.pool.fetchval(SET_STATUS, campaign_id, to, at, list(sources))
        if moved is None:
            return False
        await self._invalidate(campaign_id)
        await self.revoke_links(campaign_id)
        return True

    async def revoke_links(self, campaign_id: int) -> None:
        """Revoke the campaign's open links (a link that will not revoke is left for later)."""
        for row in await self.pool.fetch(OPEN_LINKS, campaign_id):
            try:
                telegram = await self._telegram(row["bot_id"])
                await telegram.revoke_chat_invite_link(row["chat_id"], row["invite_link"])
            except TelegramError as exc:
                if exc.is_transient:
                    log.warning("campaign %s: revoking a link failed for now: %s", campaign_id, exc)
                    continue
                # Gone already, or the bot lost its rights: nothing more can be done with it.
                log.info("campaign %s: link not revoked: %s", campaign_id, exc.description)
            except NotFound:
                pass
            await self.pool.execute(LINK_REVOKED, campaign_id, row["bot_id"])

    async def _invalidate(self, campaign_id: int) -> None:
        for row in await self.pool.fetch(BOT_IDS, campaign_id):
            self.config.invalidate(int(row["bot_id"]))

    async def rotate_report(self, campaign_id: int) -> Campaign:
        """A new report link; the old one stops working."""
        await self.get(campaign_id)
        await self.pool.execute(SET_TOKEN, campaign_id, secrets.token_urlsafe(24))
        return await self.get(campaign_id)

    async def revoke_report(self, campaign_id: int) -> Campaign:
        """No report link until a new one is made."""
        await self.get(campaign_id)
        await self.pool.execute(SET_TOKEN, campaign_id, None)
        return await self.get(campaign_id)

    async def report(self, token: str) -> Report:
        """What the sponsor's page shows, found by its token (NotFound once revoked)."""
        if not token or len(token) > 64:
            raise NotFound("no such report", code=Code.REPORT_MISSING)
        row = await self.pool.fetchrow(queries.BY_TOKEN, token)
        if row is None:
            raise NotFound("no such report", code=Code.REPORT_MISSING)
        zone = await self._zone()
        campaign = Campaign.of(await self._full(dict(row), zone))
        return Report(campaign, tuple(await self.hours(campaign, zone)), zone)

    async def hours(self, campaign: Campaign, zone: str) -> list[Hour]:
        """Joins and leaves per hour of `zone`, from the start to now (or the campaign's end and
        its retention window after, where its last joins may still be lost), at least the
        last 24 hours."""
        until = self.clock()
        if campaign.status in FINISHED:
            retention = timedelta(hours=campaign.retention_hours)
            until = min(until, campaign.status_at + retention)
        since = campaign.starts_at
        if until - since < timedelta(hours=24):
            since = until - timedelta(hours=24)
        return await queries.hourly(self.pool, campaign.id, since, until, zone)

    async def live(self) -> list[dict[str, Any]]:
        """Campaigns that may still change, with their figures (for the periodic job)."""
        rows = await self.pool.fetch(queries.LIVE)
        return await self._figured([dict(r) for r in rows], await self._zone())

    async def start(self, campaign_id: int) -> bool:
        """A scheduled campaign whose start came: into the gates."""
        sources, to = MOVES["start"]
        moved = await self.pool.fetchval(SET_STATUS, campaign_id, to, self.clock(), list(sources))
        if moved is not None:
            await self._invalidate(campaign_id)
        return moved is not None

    async def unrevoked(self) -> list[int]:
        """Finished campaigns with a link still open (a revoke that failed for now)."""
        return [int(r["campaign_id"]) for r in await self.pool.fetch(queries.UNREVOKED)]


def describe(row: dict[str, Any], counts: Counts, joins_today: int) -> None:
    """Add the figures and what the pages show of them to a campaign row."""
    row["retention_hours"] = int(row["retention"].total_seconds() // 3600)
    del row["retention"]
    row.update(
        joins=counts.joins,
        kept=counts.kept,
        left=counts.left,
        waiting=counts.waiting,
        outside_gate=counts.outside_gate,
        joins_today=joins_today,
    )
    goal = row["goal_joins"]
    row["progress"] = counts.progress(row["goal_kind"])
    row["percent"] = min(100, round(100 * row["progress"] / goal)) if goal else None
