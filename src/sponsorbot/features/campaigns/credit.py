"""Crediting campaigns from chat_member updates: one upsert per join, and per leave a look for
the bot's campaigns on the chat before an upsert for each; no Telegram call. `rules.py` is the
same fold in Python; the tests hold the two together."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import partial
from typing import Any

import asyncpg

from sponsorbot.engine.unit import Context
from sponsorbot.features.campaigns.rules import MAX_LEAVES
from sponsorbot.telegram.members import is_member

# Telegram's dates are whole seconds from Telegram's clock: a join in the second the campaign
# started, or with clocks a little apart, still counts.
SKEW = "interval '5 seconds'"
# $1 bot, $2 chat, $3 person, $4 when, $5 the invite link the update carries (or NULL).
# A join through this bot's link of the campaign, by someone the bot knows, is through the gate.
JOIN = f"""
INSERT INTO campaign_members AS m (campaign_id, user_id, bot_id, gate_joined_at, outside_at)
SELECT c.id, $3, CASE WHEN g.through THEN $1::bigint END,
       CASE WHEN g.through THEN $4::timestamptz END,
       CASE WHEN g.through THEN NULL ELSE $4::timestamptz END
FROM campaigns c
JOIN campaign_bots b ON b.campaign_id = c.id AND b.bot_id = $1
CROSS JOIN LATERAL (
    SELECT COALESCE(b.invite_link = $5, false)
           AND EXISTS (SELECT 1 FROM people p WHERE p.bot_id = $1 AND p.user_id = $3) AS through
) g
WHERE c.chat_id = $2 AND c.status IN ('running', 'paused') AND $4 >= c.starts_at - {SKEW}
ON CONFLICT (campaign_id, user_id) DO UPDATE SET
    gate_joined_at = CASE WHEN excluded.gate_joined_at IS NOT NULL AND (m.gate_joined_at IS NULL
        OR (excluded.gate_joined_at, excluded.bot_id) < (m.gate_joined_at, m.bot_id))
        THEN excluded.gate_joined_at ELSE m.gate_joined_at END,
    bot_id = CASE WHEN excluded.gate_joined_at IS NOT NULL AND (m.gate_joined_at IS NULL
        OR (excluded.gate_joined_at, excluded.bot_id) < (m.gate_joined_at, m.bot_id))
        THEN excluded.bot_id ELSE m.bot_id END,
    outside_at = LEAST(m.outside_at, excluded.outside_at)
"""
# A leave is kept for a live campaign, or for a person the campaign already has a record of
# (the retention window goes on after the campaign reached its goal or ended). In two steps,
# the bot's campaigns on the chat, then one upsert per campaign, because Citus cannot look up
# a campaign's record beside the bot's campaigns in one statement: campaign_members is
# distributed by campaign, campaign_bots by bot (docs/scaling.md). Without a campaign on the
# chat, the usual case, that is the one statement it was.
LEAVE_CAMPAIGNS = f"""
SELECT c.id, c.status IN ('running', 'paused') AS live
FROM campaigns c
JOIN campaign_bots b ON b.campaign_id = c.id AND b.bot_id = $1
WHERE c.chat_id = $2 AND $3 >= c.starts_at - {SKEW}
"""
# $1 campaign, $2 person, $3 when, $4 whether the campaign is live.
LEAVE = f"""
INSERT INTO campaign_members AS m (campaign_id, user_id, leaves)
SELECT $1, $2, ARRAY[$3::timestamptz]
WHERE $4 OR EXISTS (SELECT 1 FROM campaign_members x WHERE x.campaign_id = $1 AND x.user_id = $2)
ON CONFLICT (campaign_id, user_id) DO UPDATE SET
    leaves = ARRAY(SELECT DISTINCT l FROM unnest(m.leaves || excluded.leaves) AS l
                   ORDER BY l LIMIT {MAX_LEAVES})
"""


async def leave(
    conn: asyncpg.Connection, bot_id: int, chat_id: int, user_id: int, at: datetime
) -> None:
    """Record a leave for every campaign of the bot on the chat that keeps it."""
    for campaign in await conn.fetch(LEAVE_CAMPAIGNS, bot_id, chat_id, at):
        await conn.execute(LEAVE, campaign["id"], user_id, at, campaign["live"])


async def chat_member(body: dict[str, Any], ctx: Context) -> None:
    """Credit or record a leave for every campaign of this bot on this chat (often none)."""
    new = body.get("new_chat_member") or {}
    user = new.get("user") or {}
    user_id = user.get("id")
    if not isinstance(user_id, int) or user_id == ctx.bot.id or user.get("is_bot"):
        return
    was, now = is_member(body.get("old_chat_member") or {}), is_member(new)
    if was == now:
        return
    chat_id = int(body["chat"]["id"])
    at = _when(body.get("date"))
    if now:
        link = (body.get("invite_link") or {}).get("invite_link")
        ctx.uow.write_in_order(JOIN, ctx.bot.id, chat_id, user_id, at, link)
    else:
        ctx.uow.run_in_transaction(
            partial(leave, bot_id=ctx.bot.id, chat_id=chat_id, user_id=user_id, at=at)
        )


def _when(date: Any) -> datetime:
    """The update's own time (so the order updates arrive in does not matter), else now."""
    if isinstance(date, int) and date > 0:
        return datetime.fromtimestamp(date, UTC)
    return datetime.now(UTC)
