"""From an alert to each member's chat: who gets it, when (quiet hours), and the outbox row.

Fanning out gives every linked member whose role receives the kind (and who did not turn it
off) a delivery, due now or when their quiet hours end. Sending turns a due delivery into an
outbox row of the bot the member linked through, in the transaction that marks it sent: the
outbox then sends it exactly once, at the bot's limit, behind the visitors' replies (a lower
priority). A member who unlinked or left the team meanwhile gets nothing: their deliveries are
dropped, not sent.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import asyncpg

from sponsorbot.engine import calls
from sponsorbot.engine.outbox import ENQUEUE
from sponsorbot.engine.unit import PRIORITY_LATER, call_arrays
from sponsorbot.features.accounts import workspace
from sponsorbot.features.alerts.kinds import receives
from sponsorbot.features.alerts.messages import Alert, build

log = logging.getLogger(__name__)

BATCH = 200
DUE_ALERTS = """
SELECT id, kind, only_user, subject FROM alerts WHERE fanned_at IS NULL AND due_at <= $1
ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED
"""
MEMBERS = """
SELECT u.id, u.role, coalesce(p.muted, '{}') AS muted, p.quiet_from, p.quiet_to
FROM team_links l
JOIN users u ON u.id = l.user_id AND u.disabled_at IS NULL
LEFT JOIN alert_prefs p ON p.user_id = u.id
"""
FAN = """
INSERT INTO alert_deliveries (alert_id, user_id, due_at)
SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::timestamptz[])
ON CONFLICT DO NOTHING
"""
# Who was told of these subjects already (by another alert about the same thing).
TOLD = """
SELECT d.user_id, a.subject FROM alert_deliveries d JOIN alerts a ON a.id = d.alert_id
WHERE a.subject = ANY ($1::text[])
"""
FANNED = "UPDATE alerts SET fanned_at = $2 WHERE id = ANY ($1::bigint[])"
DUE_DELIVERIES = """
SELECT d.alert_id, d.user_id, a.kind, a.about_bot, a.data, a.count,
       l.via_bot, l.chat_id, u.role, coalesce(p.muted, '{}') AS muted,
       coalesce(u.language, w.default_language, 'en') AS language
FROM alert_deliveries d
JOIN alerts a ON a.id = d.alert_id
LEFT JOIN team_links l ON l.user_id = d.user_id
LEFT JOIN users u ON u.id = d.user_id AND u.disabled_at IS NULL
LEFT JOIN alert_prefs p ON p.user_id = d.user_id
LEFT JOIN workspace w ON w.id = 1
WHERE d.sent_at IS NULL AND d.due_at <= $1
  -- A delivery through a paused or refused bot waits for it (and never blocks the others);
  -- one whose link is gone is read, to be dropped.
  AND (l.user_id IS NULL OR EXISTS (
      SELECT 1 FROM bots b WHERE b.id = l.via_bot AND b.status = 'active'))
ORDER BY d.due_at, d.alert_id
LIMIT $2
FOR UPDATE OF d SKIP LOCKED
"""
SENT = "UPDATE alert_deliveries SET sent_at = $3 WHERE alert_id = $1 AND user_id = $2"
DROP = "DELETE FROM alert_deliveries WHERE alert_id = $1 AND user_id = $2"


def after_quiet(
    now: datetime, zone: ZoneInfo, quiet_from: int | None, quiet_to: int | None
) -> datetime:
    """When something arriving at `now` may go out: now, or the end of the quiet hours it fell
    in. The hours are minutes of the day in the workspace's zone; `from` > `to` wraps midnight,
    and equal ends mean no quiet hours."""
    if quiet_from is None or quiet_to is None or quiet_from == quiet_to:
        return now
    local = now.astimezone(zone)
    minute = local.hour * 60 + local.minute
    if quiet_from < quiet_to:
        quiet = quiet_from <= minute < quiet_to
    else:
        quiet = minute >= quiet_from or minute < quiet_to
    if not quiet:
        return now
    end = datetime.combine(local.date(), time(quiet_to // 60, quiet_to % 60), zone)
    if end <= local:
        end = datetime.combine(
            local.date() + timedelta(days=1), time(quiet_to // 60, quiet_to % 60), zone
        )
    # A day the clocks change may give a wall time twice or not at all: never before now.
    return max(end, now)


async def fan_out(conn: asyncpg.Connection, now: datetime) -> int:
    """Give the due alerts to the members who receive them; the deliveries made."""
    due = await conn.fetch(DUE_ALERTS, now, BATCH)
    if not due:
        return 0
    zone = await workspace.zone(conn)
    members = await conn.fetch(MEMBERS)
    subjects = [a["subject"] for a in due if a["subject"]]
    told = {(r["user_id"], r["subject"]) for r in await conn.fetch(TOLD, subjects)}
    alert_ids, user_ids, due_at = [], [], []
    for alert in due:
        for member in members:
            if alert["only_user"] not in (None, member["id"]):
                continue
            if alert["subject"] and (member["id"], alert["subject"]) in told:
                continue
            told.add((member["id"], alert["subject"]))
            if receives(alert["kind"], member["role"], list(member["muted"])):
                alert_ids.append(alert["id"])
                user_ids.append(member["id"])
                due_at.append(after_quiet(now, zone, member["quiet_from"], member["quiet_to"]))
    if alert_ids:
        await conn.execute(FAN, alert_ids, user_ids, due_at)
    await conn.execute(FANNED, [a["id"] for a in due], now)
    return len(alert_ids)


async def send_due(conn: asyncpg.Connection, now: datetime, panel_url: str | None) -> set[int]:
    """Queue the due deliveries in their bots' outboxes; the bots that got messages."""
    woken: set[int] = set()
    for row in await conn.fetch(DUE_DELIVERIES, now, BATCH):
        key = (row["alert_id"], row["user_id"])
        gone = row["chat_id"] is None or row["role"] is None
        if gone or not receives(row["kind"], row["role"], list(row["muted"])):
            await conn.execute(DROP, *key)  # unlinked, left the team, or turned it off since
            continue
        alert = Alert(
            row["kind"],
            row["about_bot"],
            _data(row["data"]),
            row["count"],
            row["language"],
            row["role"],
        )
        message = await build(conn, alert, panel_url, now)
        if message is not None:
            markup = {"inline_keyboard": message.keyboard} if message.keyboard else None
            out = calls.send_message(
                row["chat_id"], message.text, markup=markup, priority=PRIORITY_LATER
            )
            await conn.execute(ENQUEUE, row["via_bot"], None, *call_arrays([out]))
            woken.add(row["via_bot"])
        await conn.execute(SENT, *key, now)
    return woken


def _data(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}
