"""The team's Telegram, end to end on the simulated Telegram: a member links their chat with a
code from the panel's service, is told of a new order with buttons that act as them (and refuse
anyone else), of dead updates gathered into one alert with a Re-drive, of a bot, a channel, a
campaign in need, and not at all during quiet hours or after unlinking."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg

from sponsorbot.features.alerts.links import Prefs
from sponsorbot.features.shop.orders import Order
from tests.integration.shopkit import BOT, FAST, Shop, shop
from tests.kit import eventually

OPTIONS = dataclasses.replace(FAST, alerts_every_s=0.2, alerts_gather_s=0.6)
MEMBER = """
INSERT INTO users (email, name, password_hash, role, language)
VALUES ($1, $2, 'not-a-hash', $3, $4) RETURNING id
"""


async def member(pool: asyncpg.Pool, name: str, role: str, language: str = "en") -> int:
    """A team member of `role` (signing in is not what these tests are about)."""
    user_id: int = await pool.fetchval(MEMBER, f"{name.lower()}@example.com", name, role, language)
    return user_id


async def linked(s: Shop, user_id: int, name: str, language: str = "en") -> int:
    """Link the member's new Telegram account with a code, as the panel hands it out."""
    person = await s.tg.sim.create_user(name)
    code = await s.features.team.new_code(user_id, s.bot["id"], datetime.now(UTC))
    await s.tg.sim.send_text(person["id"], BOT, f"/start {code.start}")
    await wait_text(s, person["id"], "Linked" if language == "en" else "پیوند برقرار شد")
    return int(person["id"])


async def owner_linked(s: Shop, pool: asyncpg.Pool) -> tuple[int, int]:
    """Olivia, the owner, with her Telegram linked: her user id and her chat."""
    olivia = await member(pool, "Olivia", "owner")
    return olivia, await linked(s, olivia, "Olivia")


async def banner_order(s: Shop, name: str = "Ada") -> tuple[int, Order]:
    """An advertiser who booked the Banner through the bot, and her submitted order."""
    advertiser = await s.advertiser()
    material = f"Visit {name}\nhttps://{name.lower()}.example"
    return advertiser, await s.book(advertiser, "Banner", material)


async def bot_messages(s: Shop, chat: int) -> list[dict[str, Any]]:
    return [m for m in await s.tg.sim.read_chat(chat, BOT) if m["from"] == "bot"]


async def wait_text(s: Shop, chat: int, part: str, timeout: float = 15.0) -> dict[str, Any]:
    """The last bot message in the chat holding `part`, once there is one."""
    found: list[dict[str, Any]] = []

    async def there() -> bool:
        found[:] = [m for m in await bot_messages(s, chat) if part in (m.get("text") or "")]
        return bool(found)

    await eventually(there, timeout=timeout)
    return found[-1]


def button(message: dict[str, Any], part: str) -> str:
    for row in message.get("buttons") or []:
        for b in row:
            if part in b["text"] and b.get("callback_data"):
                return str(b["callback_data"])
    raise AssertionError(f"no button {part!r} in {message.get('buttons')}")


async def answered(s: Shop, chat: int, check: Callable[[str], bool]) -> str:
    found: list[str] = []

    async def there() -> bool:
        found[:] = [a.get("text") or "" for a in await s.tg.sim.callback_answers(chat, BOT)]
        return any(check(t) for t in found)

    await eventually(there)
    return next(t for t in found if check(t))


async def audit_kinds(
    pool: asyncpg.Pool, target: str, wait: bool = True
) -> list[tuple[str, str, str]]:
    """The audit log's entries about `target` (once there is one, unless `wait` is off)."""
    if wait:
        await eventually(
            lambda: pool.fetchval("SELECT count(*) FROM audit_log WHERE target = $1", target)
        )
    rows = await pool.fetch(
        "SELECT kind, actor, address FROM audit_log WHERE target = $1 ORDER BY id", target
    )
    return [(r["kind"], r["actor"], r["address"]) for r in rows]


async def test_a_new_order_reaches_the_linked_team_and_approve_acts_as_the_member(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path, options=OPTIONS) as s:
        olivia, chat = await owner_linked(s, pool)
        assert await pool.fetchval("SELECT telegram_id FROM users WHERE id = $1", olivia) == chat
        assert [k for k, _, _ in await audit_kinds(pool, f"user:{olivia}")] == [
            "team.telegram_linked"
        ]
        alex = await member(pool, "Alex", "admin")
        alex_chat = await linked(s, alex, "Alex")
        ada, order = await banner_order(s)
        alert = await wait_text(s, chat, f"New order #{order['id']}")
        alex_copy = await wait_text(s, alex_chat, f"New order #{order['id']}")
        assert "Banner" in alert["text"] and "Visit Ada" in alert["text"]

        await s.tg.sim.press_button(chat, BOT, alert["message_id"], button(alert, "Approve"))
        approved = await s.state_of(order["id"], "awaiting_payment")
        assert approved["timeline"][-1]["actor"] == f"panel:{olivia}" or any(
            step["actor"] == f"panel:{olivia}" for step in approved["timeline"]
        )
        assert await audit_kinds(pool, f"order:{order['id']}") == [
            ("shop.order_approved", "Olivia <olivia@example.com>", "telegram")
        ]
        edited = await wait_text(s, chat, "Approved by Olivia")
        assert edited["message_id"] == alert["message_id"] and not edited.get("buttons")
        await s.wait_for(ada, lambda m: "is approved" in (m.get("text") or ""))

        # Another member's copy, pressed after the order moved: a clear answer, nothing changed.
        await s.tg.sim.press_button(
            alex_chat, BOT, alex_copy["message_id"], button(alex_copy, "Approve")
        )
        said = await answered(s, alex_chat, lambda t: "already" in t)
        assert f"Order #{order['id']} is already awaiting payment" in said
        assert len(await audit_kinds(pool, f"order:{order['id']}")) == 1

        # The alert went out once, whatever the collector read again meanwhile.
        alerts = [m for m in await bot_messages(s, chat) if "New order" in (m.get("text") or "")]
        assert len(alerts) == 1


async def test_buttons_refuse_a_stranger_and_a_member_whose_role_lost_the_right(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path, options=OPTIONS) as s:
        alex = await member(pool, "Alex", "admin")
        chat = await linked(s, alex, "Alex")
        bob = await member(pool, "Bob", "admin")
        bob_chat = await linked(s, bob, "Bob")
        _ada, order = await banner_order(s)
        alert = await wait_text(s, chat, f"New order #{order['id']}")

        # Bob unlinked with /unlink since: his old copy's button no longer acts for anyone.
        bob_copy = await wait_text(s, bob_chat, f"New order #{order['id']}")
        await s.tg.sim.send_text(bob_chat, BOT, "/unlink")
        await wait_text(s, bob_chat, "Unlinked")
        await s.tg.sim.press_button(
            bob_chat, BOT, bob_copy["message_id"], button(bob_copy, "Approve")
        )
        said = await answered(s, bob_chat, lambda t: "team" in t)
        assert "for the team's linked members" in said

        # Alex becomes an editor: the buttons no longer act for him.
        await pool.execute("UPDATE users SET role = 'editor' WHERE id = $1", alex)
        await s.tg.sim.press_button(chat, BOT, alert["message_id"], button(alert, "Approve"))
        assert "cannot" in await answered(s, chat, lambda t: "role" in t)
        assert (await s.features.shop.order(order["id"]))["state"] == "submitted"
        assert await audit_kinds(pool, f"order:{order['id']}", wait=False) == []


async def test_reject_and_ask_for_a_change_take_the_reason_from_the_chat(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path, options=OPTIONS) as s:
        olivia = await member(pool, "Olivia", "owner", "fa")
        chat = await linked(s, olivia, "Olivia", "fa")
        ada, first = await banner_order(s)
        alert = await wait_text(s, chat, f"#{first['id']}")
        assert "سفارش تازه" in alert["text"]  # the member's language, not the advertiser's

        await s.tg.sim.press_button(chat, BOT, alert["message_id"], button(alert, "رد"))
        await wait_text(s, chat, "چرا سفارش")
        await s.tg.sim.send_text(chat, BOT, "too long " * 60)
        await wait_text(s, chat, "دلیلی برای آگهی‌دهنده")
        await s.tg.sim.send_text(chat, BOT, "Not our audience")
        rejected = await s.state_of(first["id"], "rejected")
        assert rejected["note"] == "Not our audience"
        await s.wait_for(ada, lambda m: "Not our audience" in (m.get("text") or ""))
        assert await audit_kinds(pool, f"order:{first['id']}") == [
            ("shop.order_rejected", "Olivia <olivia@example.com>", "telegram")
        ]

        _bob, second = await banner_order(s, "Bob")
        alert = await wait_text(s, chat, f"#{second['id']}")
        await s.tg.sim.press_button(chat, BOT, alert["message_id"], button(alert, "تغییر"))
        await wait_text(s, chat, "چه چیزی را")
        await s.tg.sim.send_text(chat, BOT, "/cancel")
        await wait_text(s, chat, "لغو شد")
        assert (await s.features.shop.order(second["id"]))["state"] == "submitted"
        await s.tg.sim.press_button(chat, BOT, alert["message_id"], button(alert, "تغییر"))
        await wait_text(s, chat, "چه چیزی را")
        await s.tg.sim.send_text(chat, BOT, "A shorter link, please")
        changed = await s.state_of(second["id"], "in_review")
        assert changed["note"] == "A shorter link, please"


async def test_dead_updates_gather_into_one_alert_whose_redrive_queues_them(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path, options=OPTIONS) as s:
        _, chat = await owner_linked(s, pool)
        bot_id = s.bot["id"]
        # Twenty updates a handler failed on for good, arriving over a moment.
        for n in range(20):
            await pool.execute(
                "INSERT INTO inbox (bot_id, update_id, kind, chat_key, payload, status, "
                "handled_at) VALUES ($1, $2, 'message', 1, '{}', 'dead', now())",
                bot_id,
                900_000 + n,
            )
        alert = await wait_text(s, chat, "set aside")
        assert "20 update(s)" in alert["text"]
        await s.tg.sim.press_button(chat, BOT, alert["message_id"], button(alert, "Re-drive"))
        said = await answered(s, chat, lambda t: "Re-driven" in t)
        assert "20 update(s)" in said
        dead = await pool.fetchval(
            "SELECT count(*) FROM inbox WHERE bot_id = $1 AND status = 'dead' "
            "AND update_id >= 900000",
            bot_id,
        )
        assert dead < 20
        alerts = [m for m in await bot_messages(s, chat) if "set aside" in (m.get("text") or "")]
        assert len(alerts) == 1


async def test_conditions_are_told_once_and_quiet_hours_and_unlinking_hold_them_back(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path, options=OPTIONS) as s:
        olivia, chat = await owner_linked(s, pool)
        bot_id = s.bot["id"]
        await pool.execute(
            "INSERT INTO channels (bot_id, chat_id, title, chat_type, status, missing) "
            "VALUES ($1, -100777, 'Cinema', 'channel', 'missing_rights', '{can_invite_users}')",
            bot_id,
        )
        await pool.execute(
            "INSERT INTO gate_channels (bot_id, chat_id, position) VALUES ($1, -100777, 1)",
            bot_id,
        )
        await pool.execute(
            "UPDATE shop_settings SET key_refused_at = now() WHERE bot_id = $1", bot_id
        )
        # (The channel check may find this made-up channel unreachable before the alert goes:
        # either problem is the same alert, told once.)
        await wait_text(s, chat, "lost its rights in Cinema")
        await wait_text(s, chat, "TronGrid refused the API key")

        # Quiet from an hour ago to two hours on: what comes now waits, and unlinking drops it.
        now = datetime.now(UTC)
        minute = now.hour * 60 + now.minute
        quiet = Prefs((), (minute - 60) % 1440, (minute + 120) % 1440)
        await s.features.team.save_prefs(olivia, "owner", ["order_review"], quiet)
        _ada, order = await banner_order(s)

        async def held() -> bool:
            return bool(
                await pool.fetchval(
                    "SELECT count(*) FROM alert_deliveries d JOIN alerts a ON a.id = d.alert_id "
                    "WHERE a.kind = 'order_review' AND d.sent_at IS NULL"
                )
            )

        await eventually(held)
        assert await s.features.team.unlink(olivia)
        assert not await held()
        told = [
            m for m in await bot_messages(s, chat) if f"#{order['id']}" in (m.get("text") or "")
        ]
        assert not told
        # Each condition was told once, however often the collector looked.
        texts = [m.get("text") or "" for m in await bot_messages(s, chat)]
        assert sum("lost its rights" in t for t in texts) == 1
        assert sum("TronGrid refused" in t for t in texts) == 1
