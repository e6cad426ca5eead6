"""An alert as one member reads it: the text in their language, and the buttons their role may
press. Built when it goes out, from what the database says then (an order that moved meanwhile
is not offered for review any more)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

import asyncpg

from sponsorbot.features.accounts.permissions import allowed
from sponsorbot.features.alerts.buttons import TeamOrder, TeamRedrive
from sponsorbot.features.alerts.kinds import ACT_PERMISSION, ORDER_MOVES
from sponsorbot.features.alerts.texts import team_text
from sponsorbot.features.campaigns.queries import figures
from sponsorbot.features.campaigns.rules import Counts
from sponsorbot.features.shop.rules import show

ORDER = """
SELECT o.id, o.state, o.title, o.price_usdt, o.user_name, o.kind, o.material, o.bot_id,
       b.username AS bot
FROM shop_orders o JOIN bots b ON b.id = o.bot_id WHERE o.id = $1
"""
BOT = "SELECT username FROM bots WHERE id = $1"
CAMPAIGN = "SELECT id, name, status, goal_joins, goal_kind FROM campaigns WHERE id = $1"
BROADCAST = """
SELECT b.bot_id, b.title, b.sent, b.blocked, b.failed, bo.username AS bot
FROM broadcasts b JOIN bots bo ON bo.id = b.bot_id WHERE b.id = $1
"""
# How much of an advertiser's post the review shows.
SHOWN = 300
REASONS = {
    "en": {
        "no_match": "no order asks for this amount",
        "ambiguous": "two orders ask for it",
        "too_early": "sent before any order was approved",
    },
    "fa": {
        "no_match": "هیچ سفارشی این مبلغ را نمی‌خواهد",
        "ambiguous": "دو سفارش آن را می‌خواهند",
        "too_early": "پیش از تأیید هر سفارشی فرستاده شده",
    },
}
PROBLEMS = {
    "en": {"missing_rights": "rights missing", "unreachable": "the channel cannot be reached"},
    "fa": {"missing_rights": "دسترسی‌ها کم است", "unreachable": "کانال در دسترس نیست"},
}


@dataclass(frozen=True, slots=True)
class Alert:
    """A delivery due to go out, with what the alert recorded."""

    kind: str
    about_bot: int | None
    data: Mapping[str, Any]
    count: int
    language: str
    role: str


@dataclass(frozen=True, slots=True)
class Message:
    """What to send: HTML text and an inline keyboard (None: no buttons)."""

    text: str
    keyboard: list[list[dict[str, str]]] | None


def amount(value: Any) -> str:
    """An amount (a number, or a number's text from an alert's data) as the shop shows one."""
    return show(Decimal(str(value)))


def _material(order: Mapping[str, Any]) -> str:
    material = order["material"] if isinstance(order["material"], dict) else {}
    if order["kind"] == "gate_slot":
        return str(material.get("chat_title") or material.get("title") or "")
    if order["kind"] == "banner":
        return f"{material.get('text', '')}\n{material.get('url', '')}"
    post = material.get("post")
    text = str((post if isinstance(post, dict) else material).get("text") or "")
    return text if len(text) <= SHOWN else text[:SHOWN] + "…"


def _told(text: str, *rows: list[dict[str, str]]) -> Message:
    """A message with its non-empty rows of buttons (None when there is none)."""
    return Message(text, [row for row in rows if row] or None)


def _button(text: str, callback_data: str) -> dict[str, str]:
    return {"text": text, "callback_data": callback_data}


def _paid_and_price(order_id: int, data: Mapping[str, Any]) -> dict[str, Any]:
    """What a part or over payment's alert says of its order: the sum paid and the price."""
    return {"order": order_id, "paid": amount(data["paid"]), "price": amount(data["price"])}


def _panel(base: str | None, path: str, lang: str) -> list[dict[str, str]]:
    # A URL button only where the panel has a public address Telegram can open.
    if not base or not base.startswith(("https://", "http://")):
        return []
    return [{"text": team_text("open", lang), "url": base.rstrip("/") + path}]


async def build(
    pool: asyncpg.Pool | asyncpg.Connection, alert: Alert, panel_url: str | None, now: datetime
) -> Message | None:
    """The message for this member, or None when there is nothing left to tell."""
    lang, data = alert.language, alert.data
    may_act = allowed(ACT_PERMISSION, alert.role)
    if alert.kind == "order_review":
        order = await pool.fetchrow(ORDER, int(data["order_id"]))
        if order is None or order["state"] != "submitted":
            return None  # reviewed meanwhile (or gone): nothing to review
        key = "order_resubmitted" if data.get("step") == "resubmitted" else "order_review"
        text = team_text(
            key,
            lang,
            order=order["id"],
            title=order["title"],
            price=amount(order["price_usdt"]),
            advertiser=order["user_name"] or "?",
            bot=order["bot"],
            material=_material(order),
        )
        moves = [
            _button(team_text(move, lang), TeamOrder(order["id"], move).pack())
            for move in ORDER_MOVES
            if may_act
        ]
        link = _panel(panel_url, f"/shop/orders/{order['id']}", lang)
        return _told(text, moves, link)
    if alert.kind in ("payment_credited", "payment_decision") and "order_id" in data:
        order_id = int(data["order_id"])
        if data.get("step") == "expired":
            text = team_text("payment_underpaid", lang, **_paid_and_price(order_id, data))
        elif alert.kind == "payment_decision":
            extra = Decimal(str(data["paid"])) - Decimal(str(data["price"]))
            sums = _paid_and_price(order_id, data)
            text = team_text("payment_overpaid", lang, **sums, extra=amount(extra))
        else:
            text = team_text(
                "payment_credited",
                lang,
                order=order_id,
                amount=amount(data.get("amount", "0")),
                coin=data.get("coin", ""),
                credited=amount(data.get("credited_usdt", "0")),
                paid=amount(data.get("paid", "0")),
                price=amount(data.get("price", "0")),
            )
        link = _panel(panel_url, f"/shop/orders/{order_id}", lang)
        return _told(text, link)
    if alert.kind == "payment_decision":
        reason = REASONS.get(lang, REASONS["en"]).get(
            str(data.get("reason")), str(data.get("reason"))
        )
        text = team_text(
            "payment_unmatched",
            lang,
            amount=amount(data.get("amount", "0")),
            coin=data.get("coin", ""),
            reason=reason,
        )
        link = _panel(panel_url, "/shop/transfers", lang)
        return _told(text, link)
    if alert.kind in ("bot_refused", "tron_key"):
        path = (
            f"/bots/{alert.about_bot}/settings"
            if alert.kind == "bot_refused"
            else (f"/bots/{alert.about_bot}/shop")
        )
        link = _panel(panel_url, path, lang)
        return _told(team_text(alert.kind, lang, bot=data.get("bot", "?")), link)
    if alert.kind == "channel_rights":
        problem = PROBLEMS.get(lang, PROBLEMS["en"]).get(str(data.get("status")), "")
        missing = data.get("missing") or []
        if missing:
            problem = f"{problem}: {', '.join(str(m) for m in missing)}"
        text = team_text(
            "channel_rights",
            lang,
            bot=data.get("bot", "?"),
            channel=data.get("channel", "?"),
            problem=problem,
        )
        link = _panel(panel_url, f"/bots/{alert.about_bot}/channels", lang)
        return _told(text, link)
    if alert.kind in ("dead_updates", "given_up"):
        bot = await pool.fetchval(BOT, alert.about_bot)
        if bot is None:
            return None  # the bot was removed
        text = team_text(alert.kind, lang, bot=bot, count=alert.count)
        redrive = []
        if may_act and alert.about_bot is not None:
            redrive.append(_button(team_text("redrive", lang), TeamRedrive(alert.about_bot).pack()))
        return _told(text, redrive)
    if alert.kind == "campaign_done":
        campaign = await pool.fetchrow(CAMPAIGN, int(data["campaign_id"]))
        if campaign is None:
            return None
        counts = (await figures(pool, [campaign["id"]], now, "UTC")).get(
            campaign["id"], (Counts(), 0)
        )[0]
        key = "campaign_reached" if data.get("status") == "reached" else "campaign_ended"
        text = team_text(
            key,
            lang,
            name=campaign["name"],
            joins=counts.joins,
            left=counts.left,
            goal=campaign["goal_joins"] or team_text("none", lang),
        )
        link = _panel(panel_url, f"/campaigns/{campaign['id']}", lang)
        return _told(text, link)
    if alert.kind == "broadcast_done":
        row = await pool.fetchrow(BROADCAST, int(data["broadcast_id"]))
        if row is None:
            return None
        text = team_text(
            "broadcast_done",
            lang,
            title=row["title"],
            bot=row["bot"],
            sent=row["sent"],
            blocked=row["blocked"],
            failed=row["failed"],
        )
        link = _panel(panel_url, f"/broadcasts/{row['bot_id']}/{data['broadcast_id']}", lang)
        return _told(text, link)
    return None
