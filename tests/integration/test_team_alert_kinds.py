"""Every other kind of the team's alerts, from the real flows that cause them: a payment that
matches no order, one credited, a token Telegram refuses, a campaign that ended, a broadcast
that finished; the daily digest's figures; and the Notifications page that sets it all up."""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import asyncpg

from sponsorbot.engine.sender import GAVE_UP
from sponsorbot.features.alerts.links import Prefs
from sponsorbot.features.broadcasts.post import Post
from sponsorbot.features.broadcasts.service import Draft as BroadcastDraft
from sponsorbot.features.campaigns.service import Draft
from tests.integration.broadcastkit import add_people
from tests.integration.shopkit import BOT, shop
from tests.integration.test_team_alerts import (
    OPTIONS,
    banner_order,
    bot_messages,
    member,
    owner_linked,
    wait_text,
)

DIGEST = dataclasses.replace(OPTIONS, digest_every_s=0.2)


def zone_in_the_day() -> str:
    """A fixed-offset zone where it is now between 10:00 and 20:00 (the digest goes after 09:00)."""
    now = datetime.now(UTC)
    for offset in range(-12, 15):
        name = f"Etc/GMT{-offset:+d}" if offset else "UTC"
        if 10 <= now.astimezone(ZoneInfo(name)).hour < 20:
            return name
    raise AssertionError("no zone found")


async def test_payments_the_team_must_know_of_are_told_with_their_amounts(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path, options=OPTIONS) as s:
        _, chat = await owner_linked(s, pool)
        ada, order = await s.approved_banner()
        # 4 USDT is not the order's exact amount: it waits for the owner's decision.
        part = await s.tg.sim.tron_usdt(s.payer, s.address, "4", solidify="now")
        await s.say(ada, part["hash"])
        waiting = await wait_text(s, chat, "needs your decision")
        assert "4 USDT" in waiting["text"]
        transfer = (await s.features.shop.transfers("unattributed"))["items"][0]
        await s.features.shop.assign_transfer(transfer["id"], order["id"], "owner")
        credited = await wait_text(s, chat, "Payment credited")
        assert f"order #{order['id']}" in credited["text"]
        assert "4 of 5 USDT paid" in credited["text"]
        # The rest never comes: when its time runs out, what was paid waits for a decision.
        await pool.execute(
            "UPDATE shop_orders SET due_at = now() - interval '1 second' WHERE id = $1",
            order["id"],
        )
        await s.state_of(order["id"], "expired")
        expired = await wait_text(s, chat, "expired part paid")
        assert "4 of 5 USDT" in expired["text"]


async def test_a_refused_token_and_a_finished_campaign_and_broadcast_are_told_once(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path, options=OPTIONS) as s:
        _, chat = await owner_linked(s, pool)
        # A second bot, whose token Telegram then refuses: the team hears of it through the
        # bot they linked, which still works.
        other = await s.tg.sim.create_bot("second_bot")
        second = await s.run.engine.bots.add(other["token"], "polling")
        await s.tg.sim.revoke_token("second_bot")
        refused = await wait_text(s, chat, "refused the token of @second_bot", timeout=30.0)
        assert second["id"] and refused

        draft = Draft("Winter", "@adachannel", (s.bot["id"],))
        campaign = await s.features.campaigns.create(draft, "test")
        await s.features.campaigns.end(campaign["id"])
        ended = await wait_text(s, chat, "Campaign “Winter” ended")
        assert "0 joins" in ended["text"]
        texts = [m.get("text") or "" for m in await bot_messages(s, chat)]
        assert sum("refused the token" in t for t in texts) == 1


async def test_the_digest_compares_yesterday_with_the_day_before_once_a_day(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    zone = zone_in_the_day()
    await pool.execute("UPDATE workspace SET time_zone = $1 WHERE id = 1", zone)
    async with shop(pool, db_dsn, tmp_path, options=DIGEST) as s:
        olivia, chat = await owner_linked(s, pool)
        today = datetime.now(UTC).astimezone(ZoneInfo(zone)).date()
        yesterday, before = today - timedelta(days=1), today - timedelta(days=2)
        bot = s.bot["id"]
        for day, passes, joins in ((yesterday, 30, 12), (before, 20, 12)):
            await pool.execute(
                "INSERT INTO stats_days (bot_id, day, kind, n) VALUES ($1, $2, 'gate_passed', $3),"
                " ($1, $2, 'joined', $4)",
                bot,
                day,
                passes,
                joins,
            )
        for user in range(7):
            await pool.execute(
                "INSERT INTO stats_visits (bot_id, day, user_id) VALUES ($1, $2, $3)",
                bot,
                yesterday,
                1000 + user,
            )
        await s.features.team.save_prefs(olivia, "owner", [], Prefs(digest=True))
        digest = await wait_text(s, chat, "Yesterday")
        assert yesterday.isoformat() in digest["text"]
        assert "Visitors: 7 (+7)" in digest["text"]
        assert "Passed the gate: 30 (+10)" in digest["text"]
        assert "Channel joins: 12 (same as the day before)" in digest["text"]
        assert "Revenue: 0 USDT (nothing the day before)" in digest["text"]
        assert await pool.fetchval("SELECT digest_on FROM alert_prefs WHERE user_id = $1", olivia)
        texts = [m.get("text") or "" for m in await bot_messages(s, chat)]
        assert sum("Yesterday" in t for t in texts) == 1


async def test_the_notifications_page_links_chooses_and_unlinks(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """The page's service calls, as the routes make them (the routes' HTTP is in the panel's
    role test): a code only for a listed bot, quiet hours both or neither, the control bot."""
    async with shop(pool, db_dsn, tmp_path, options=OPTIONS) as s:
        team = s.features.team
        olivia = await member(pool, "Olivia", "owner")
        assert [b["username"] for b in await team.bots()] == [BOT]
        code = await team.new_code(olivia, s.bot["id"], datetime.now(UTC))
        assert re.fullmatch(r"team_[a-z2-9]{12}", code.start)
        assert code.url == f"https://t.me/{BOT}?start={code.start}"
        stored = await pool.fetchval(
            "SELECT count(*) FROM team_link_codes WHERE user_id = $1", olivia
        )
        assert stored == 1
        # An order waits for review before Olivia links: she is told of it when she does.
        _ada, order = await banner_order(s)
        # A second code replaces the first.
        second = await team.new_code(olivia, s.bot["id"], datetime.now(UTC))
        person = await s.tg.sim.create_user("Olivia")
        await s.tg.sim.send_text(person["id"], BOT, f"/start {code.start}")
        await wait_text(s, person["id"], "not valid or has expired")
        await s.tg.sim.send_text(person["id"], BOT, f"/start {second.start}")
        await wait_text(s, person["id"], "Linked")
        assert (await team.link(olivia) or {}).get("chat_id") == person["id"]
        waiting = await wait_text(s, person["id"], f"New order #{order['id']}")
        assert waiting["buttons"]

        saved = await team.save_prefs(
            olivia, "owner", ["order_review"], Prefs(quiet_from=1320, quiet_to=420)
        )
        assert "dead_updates" in saved.muted and "order_review" not in saved.muted
        await team.set_control_bot(s.bot["id"])
        assert await team.control_bot() == s.bot["id"]
        assert await team.unlink(olivia)
        assert not await team.unlink(olivia)
        assert await team.link(olivia) is None


async def test_an_overpaid_order_a_refused_trongrid_key_and_a_finished_broadcast_are_told(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path, options=OPTIONS) as s:
        _, chat = await owner_linked(s, pool)
        bot_id = s.bot["id"]
        # 12 USDT for a 5 USDT banner, assigned by the owner: over its price, the extra to decide.
        ada, order = await s.approved_banner()
        paid = await s.tg.sim.tron_usdt(s.payer, s.address, "12", solidify="now")
        await s.say(ada, paid["hash"])
        await wait_text(s, chat, "needs your decision")
        transfer = (await s.features.shop.transfers("unattributed"))["items"][0]
        await s.features.shop.assign_transfer(transfer["id"], order["id"], "owner")
        over = await wait_text(s, chat, "is overpaid")
        assert (
            "12 USDT received for a price of 5" in over["text"] and "7 USDT extra" in over["text"]
        )

        # TronGrid starts asking for a key the shop does not have: its next check is refused.
        await s.tg.sim.tron_require_api_key("a-key-the-shop-lacks")
        bob, second = await s.approved_banner()
        sent = await s.tg.sim.tron_usdt(s.payer, s.address, second["due_usdt"], solidify="now")
        await s.say(bob, sent["hash"])
        await wait_text(s, chat, "TronGrid refused the API key", timeout=30.0)
        await s.tg.sim.tron_require_api_key(None)

        fans = await add_people(s.tg.sim, pool, bot_id, BOT, 3)
        draft = BroadcastDraft("Winter sale", Post(text="Films, half price"))
        made = await s.features.broadcasts.create(bot_id, draft, "test")
        await s.features.broadcasts.send(bot_id, made["id"])
        done = await wait_text(s, chat, "Broadcast “Winter sale” finished", timeout=30.0)
        # Everyone who started the bot: the three, and the two advertisers.
        assert f"{len(fans) + 2} sent, 0 blocked the bot, 0 failed" in done["text"]


async def test_messages_given_up_gather_into_one_alert(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path, options=OPTIONS) as s:
        _, chat = await owner_linked(s, pool)
        for n in range(3):
            await pool.execute(
                "INSERT INTO outbox (bot_id, chat_id, method, params, status, error)"
                " VALUES ($1, $2, 'sendMessage', '{}', 'failed', $3)",
                s.bot["id"],
                5000 + n,
                GAVE_UP,
            )
        alert = await wait_text(s, chat, "given up")
        assert "3 message(s) given up" in alert["text"]
        assert alert["buttons"][0][0]["text"] == "🔁 Re-drive"
