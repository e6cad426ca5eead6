"""The audit log in plain words: each entry's change as "Field: before → after" in the viewer's
language, and the record it names as a link to that record's page."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from sponsorbot.features.accounts.audit import changes
from sponsorbot.web.panel.i18n import N_
from sponsorbot.web.panel.i18n import gettext as _
from sponsorbot.web.panel.routes_broadcasts import STATUS_NAMES as BROADCAST_STATUS
from sponsorbot.web.panel.routes_campaigns import STATUS_NAMES as CAMPAIGN_STATUS
from sponsorbot.web.panel.routes_shop import STATE_NAMES as ORDER_STATES
from sponsorbot.web.panel.web import ROLE_NAMES

# What the log calls a field, as an owner reads it; a field not listed is shown with its
# underscores as spaces.
FIELD_NAMES = {
    "name": N_("Name"),
    "title": N_("Title"),
    "status": N_("Status"),
    "state": N_("State"),
    "role": N_("Role"),
    "email": N_("Email"),
    "goal_joins": N_("Goal"),
    "goal_kind": N_("Goal counts"),
    "ends_at": N_("Ends"),
    "retention_hours": N_("Retention window (hours)"),
    "position": N_("Place in the gate"),
    "chat_id": N_("Channel"),
    "bot_id": N_("Bot"),
    "bot_ids": N_("Bots"),
    "post.text": N_("Text"),
    "post.buttons": N_("Buttons"),
    "post.paid": N_("Paid broadcast"),
    "post.protect": N_("Protected"),
    "post.silent": N_("Silent"),
    "post.media_kind": N_("Media"),
    "post.file_id": N_("File"),
    "scheduled_at": N_("Send at"),
    "audience.active_days": N_("Active in the last (days)"),
    "audience.language": N_("Language"),
    "audience.campaign_id": N_("Joined through a campaign"),
    "audience.passed": N_("Passed the gate"),
    "mode": N_("Mode"),
    "storage_chat": N_("Storage chat"),
    "telegram_id": N_("Telegram id"),
    "enabled": N_("On"),
    "protect": N_("Protected"),
    "auto_delete_minutes": N_("Delete after (minutes)"),
    "reason": N_("Reason"),
    "hash": N_("Transaction hash"),
    "attempts": N_("Attempts"),
    "tokens_revoked": N_("API tokens revoked"),
    "time_zone": N_("Time zone"),
    "default_language": N_("Default language"),
    "gate": N_("Gate"),
    "texts": N_("Texts"),
}
# Values of these fields are names the panel already translates.
VALUE_NAMES: dict[str, dict[str, str]] = {
    "status": {**CAMPAIGN_STATUS, **BROADCAST_STATUS},
    "state": ORDER_STATES,
    "role": ROLE_NAMES,
}
# Entries whose fields say less than their kind: "Sent now" would read "Status: Draft →
# Scheduled" (sending starts from the schedule); an API call's route is in its address.
QUIET_KINDS = ("broadcast.send",)
QUIET_PREFIXES = ("api.",)
TAG = re.compile(r"<[^>]+>")
MOMENT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")
LONGEST = 80
# A target of the form "order:4" names a record whose page is the address shown here.
PAGES = {
    "order": "/shop/orders/{}",
    "campaign": "/campaigns/{}",
    "transfer": "/shop/transfers",
}
RECORD_NAMES = {
    "order": N_("Order #%(id)s"),
    "broadcast": N_("Broadcast #%(id)s"),
    "campaign": N_("Campaign #%(id)s"),
    "product": N_("Product #%(id)s"),
    "transfer": N_("Transfer #%(id)s"),
}
# An owner-API call, by its route's name, in the words of the panel's own entries.
API_CALLS = {
    "act_on_broadcast": N_("broadcast paused, resumed or cancelled"),
    "act_on_campaign": N_("campaign paused, resumed or ended"),
    "act_on_order": N_("order moved on"),
    "add_bot": N_("bot added"),
    "add_channel": N_("channel added"),
    "add_payment": N_("hash added for an order"),
    "add_uploader": N_("uploader added"),
    "approve_order": N_("order approved"),
    "assign_transfer": N_("transfer assigned"),
    "change_broadcast": N_("broadcast changed"),
    "change_campaign": N_("campaign changed"),
    "change_product": N_("product changed"),
    "check_channel": N_("channel checked"),
    "create_broadcast": N_("broadcast created"),
    "create_campaign": N_("campaign created"),
    "create_content": N_("content created"),
    "create_product": N_("product created"),
    "create_token": N_("API token created"),
    "decide_request": N_("join request decided"),
    "delete_broadcast": N_("draft deleted"),
    "delete_content": N_("content deleted"),
    "delete_product": N_("product deleted"),
    "patch_bot": N_("bot changed"),
    "patch_content": N_("content changed"),
    "pause_bot": N_("bot paused"),
    "preview_post": N_("preview sent"),
    "put_gate": N_("gate changed"),
    "put_shop": N_("shop settings changed"),
    "put_texts": N_("visitor texts changed"),
    "redrive": N_("failed messages tried again"),
    "remove_bot": N_("bot removed"),
    "remove_channel": N_("channel removed"),
    "remove_uploader": N_("uploader removed"),
    "replace_token": N_("bot token replaced"),
    "requeue_payment": N_("payment checked again"),
    "resume_bot": N_("bot resumed"),
    "return_transfer": N_("transfer sent back"),
    "revoke_token": N_("API token revoked"),
    "send_broadcast": N_("broadcast sent or scheduled"),
    "upload_media": N_("file uploaded"),
}
BROADCAST_BOTS = "SELECT id, bot_id FROM broadcasts WHERE id = ANY($1::bigint[])"
PRODUCT_BOTS = "SELECT id, bot_id FROM shop_products WHERE id = ANY($1::bigint[])"


@dataclass(frozen=True, slots=True)
class Line:
    """One changed field as shown: its name, and its value before (empty for a record just
    made) and after as text."""

    field: str
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class Target:
    """What an entry names: its text, and the page of that record when it has one."""

    text: str
    href: str | None


def field_name(field: str) -> str:
    """The field in the viewer's language."""
    known = FIELD_NAMES.get(field)
    return _(known) if known else field.replace("_", " ").replace(".", ": ")


def value_text(field: str, value: Any, when: Callable[[datetime], str]) -> str:
    """A value as a sentence would write it: no `None`, no Python lists or quotes, status
    names translated, times in the workspace's zone, long texts cut without their tags."""
    if value is None or value == "" or value == []:
        return "—"
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    names = VALUE_NAMES.get(field.rsplit(".", 1)[-1])
    if names and str(value) in names:
        return _(names[str(value)])
    if isinstance(value, list):
        return ", ".join(value_text(field, v, when) for v in value)
    text = str(value)
    if MOMENT.match(text):
        try:
            return when(datetime.fromisoformat(text))
        except ValueError:
            pass
    text = TAG.sub("", text).replace("\n", " ").strip()
    return text if len(text) <= LONGEST else text[: LONGEST - 1] + "…"


def lines(entry: dict[str, Any], when: Callable[[datetime], str]) -> list[Line]:
    """The entry's changes, one line a field."""
    kind = str(entry["kind"])
    if kind in QUIET_KINDS or kind.startswith(QUIET_PREFIXES):
        return []
    # An entry that only says what was made (no "before") shows each value alone.
    made = entry.get("before") is None
    return [
        Line(
            field_name(c.field),
            "" if made else value_text(c.field, c.before, when),
            value_text(c.field, c.after, when),
        )
        for c in changes(entry.get("before"), entry.get("after"))
    ]


def _record(target: str) -> tuple[str, int] | None:
    kind, _sep, rest = target.partition(":")
    return (kind, int(rest)) if kind in RECORD_NAMES and rest.isdigit() else None


async def targets(pool: asyncpg.Pool, entries: Iterable[dict[str, Any]]) -> dict[int, Target]:
    """Each entry's target by the entry's id: "order:4" as "Order #4" linked to its page;
    a broadcast's or a product's page needs its bot, read in one query for the page."""
    rows = list(entries)
    named = {r["id"]: _record(str(r["target"] or "")) for r in rows}
    wanted: dict[str, list[int]] = {"broadcast": [], "product": []}
    for record in named.values():
        if record and record[0] in wanted:
            wanted[record[0]].append(record[1])
    bots = {
        kind: {r["id"]: r["bot_id"] for r in await pool.fetch(sql, ids)} if ids else {}
        for kind, sql, ids in (
            ("broadcast", BROADCAST_BOTS, wanted["broadcast"]),
            ("product", PRODUCT_BOTS, wanted["product"]),
        )
    }
    found: dict[int, Target] = {}
    for row in rows:
        record = named[row["id"]]
        after = row.get("after") or {}
        href: str | None = None
        if record is None:
            # A campaign's entries name it by its name; its id is in what was written.
            if str(row["kind"]).startswith("campaign.") and isinstance(after.get("id"), int):
                href = f"/campaigns/{after['id']}"
            found[row["id"]] = Target(str(row["target"] or ""), href)
            continue
        kind, number = record
        text = _(RECORD_NAMES[kind], id=number)
        if kind in PAGES:
            href = PAGES[kind].format(number)
        elif number in bots.get(kind, {}):  # else deleted since: no page
            bot = bots[kind][number]
            href = (
                f"/broadcasts/{bot}/{number}"
                if kind == "broadcast"
                else f"/bots/{bot}/shop/products/{number}/edit"
            )
        found[row["id"]] = Target(text, href)
    return found


def api_call(kind: str) -> str:
    """What an API entry ("api.add_bot") did, in the viewer's language."""
    name = kind.removeprefix("api.")
    known = API_CALLS.get(name)
    return _(known) if known else name.replace("_", " ")
