"""The ad shop end to end on the simulated Telegram and TronGrid: an advertiser books in the bot,
the owner approves, USDT and TRX are verified on chain, and a paid order starts its ad."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from sponsorbot.features.content.service import NewContent
from sponsorbot.features.errors import Conflict, Invalid
from sponsorbot.features.shop.products import ProductDraft
from sponsorbot.features.shop.settings import ShopConfig
from sponsorbot.tron.verifier import credited_usdt
from tests.integration.broadcastkit import add_people
from tests.integration.shopkit import BOT, is_summary, shop
from tests.kit import eventually


def text_has(part: str) -> Callable[[dict[str, Any]], bool]:
    """A check of a message: its text or caption holds `part`."""
    return lambda m: part in (m.get("text") or m.get("caption") or "")


async def test_an_order_is_booked_approved_paid_in_two_parts_and_its_campaign_runs(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path) as s:
        ada = await s.advertiser()
        await s.own_channel(ada)
        order = await s.book(ada, "Gate slot", "@adachannel")
        assert order["state"] == "submitted"
        assert order["material"]["title"] == "Ada's channel"
        assert order["price_usdt"] == "10"
        await s.tg.sim.set_price("0.25")
        approved = await s.features.shop.approve(order["id"], "owner")
        assert approved["state"] == "awaiting_payment"
        assert approved["usdt_per_trx"] == "0.25"
        request = await s.wait_for(ada, text_has("Please pay"))
        assert s.address in request["text"]
        # The exact amounts: the price and the order's own tail of millionths.
        assert f"{approved['due_usdt']} USDT" in request["text"]
        assert f"{approved['due_trx']} TRX" in request["text"]
        assert approved["due_usdt"].startswith("10.00") and approved["due_trx"].startswith("40.00")
        qr = await s.wait_for(ada, lambda m: (m.get("media") or {}).get("kind") == "photo")
        assert s.address in (qr.get("caption") or "")
        assert qr["message_id"] > request["message_id"]  # the QR code follows its explanation
        # Lost the message? /orders lists the orders and sends the payment details again.
        before = len(await s.messages(ada))
        await s.say(ada, "/orders")
        listed = await s.next_message(ada, before, text_has("Your orders"))
        assert f"#{order['id']} Gate slot: approved, waiting for your payment" in listed["text"]
        again = await s.next_message(ada, before, text_has("Please pay"))
        assert s.address in again["text"]
        photo = await s.next_message(ada, before, lambda m: bool(m.get("media")))
        assert photo["media"]["file_id"] == qr["media"]["file_id"]

        # A first part in USDT is not the exact amount: it waits for the owner, who assigns
        # it. Partly paid, 48 hours for the rest, which has an exact amount of its own.
        part = await s.tg.sim.tron_usdt(s.payer, s.address, "4", solidify="now")
        await s.say(ada, part["hash"])
        await s.wait_for(ada, text_has("kept for the owner"))
        waiting = (await s.features.shop.transfers("unattributed"))["items"]
        await s.features.shop.assign_transfer(waiting[0]["id"], order["id"], "owner")
        await s.wait_for(ada, text_has("6 USDT is still due"))
        partly = await s.state_of(order["id"], "partly_paid")
        assert partly["paid_usdt"] == "4"
        assert partly["due_at"] is not None
        assert partly["due_usdt"].startswith("6.00") and partly["due_trx"].startswith("24.00")
        # Sending the same hash again: already being checked (counted), nothing new stored.
        await s.say(ada, part["hash"])
        await s.wait_for(ada, text_has("already being checked"))
        assert len((await s.features.shop.order(order["id"]))["payments"]) == 1

        # A day later the first reminder goes.
        await pool.execute(
            "UPDATE shop_orders SET due_at = now() + interval '23 hours' WHERE id = $1",
            order["id"],
        )
        await s.wait_for(ada, text_has("Reminder"))
        reminded = await s.features.shop.order(order["id"])
        assert any(step["kind"] == "reminder" for step in reminded["timeline"])

        # The rest in TRX at the rate locked at approval (the price source moved since).
        await s.tg.sim.set_price("0.5")
        rest = await s.tg.sim.tron_trx(s.payer, s.address, partly["due_trx"], solidify="now")
        await s.say(ada, f"https://tronscan.org/#/transaction/{rest['hash']}")
        await s.wait_for(ada, text_has("paid in full"))
        running = await s.state_of(order["id"], "running")
        worth = credited_usdt(Decimal(partly["due_trx"]), Decimal("0.25"))
        assert Decimal(running["paid_usdt"]) == 4 + worth
        assert running["campaign_id"] is not None
        campaign = await s.features.campaigns.get(running["campaign_id"])
        assert campaign["goal_joins"] == 3
        assert campaign["status"] == "running"
        kinds = [step["kind"] for step in running["timeline"]]
        for kind in ("submitted", "approved", "rate_locked", "payment_credited", "paid"):
            assert kind in kinds
        assert kinds.index("started") > kinds.index("paid")
        credited = [p for p in running["payments"] if p["status"] == "credited"]
        assert [p["coin"] for p in credited] == ["USDT", "TRX"]
        assert Decimal(credited[1]["credited_usdt"]) == worth
        # When the campaign ends, the order is complete and the advertiser hears how it went.
        await s.features.campaigns.end(running["campaign_id"])
        done = await s.state_of(order["id"], "completed")
        assert done["report"] == {"joins": 0}
        await s.wait_for(ada, text_has("0 people joined your channel"))


async def test_a_gate_slot_is_only_for_a_channel_the_advertiser_runs_and_the_bot_does_not_use(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path) as s:
        bot_id = s.bot["id"]
        ada = await s.advertiser()
        # A channel the bot administers but Ada does not run: refused, its title not shown.
        refused = await s.offer(ada, "Gate slot", "@adachannel")
        assert "only the creator or an administrator" in refused["text"]
        assert "Ada's channel" not in refused["text"] and not is_summary(refused)
        # Her own channel, before she made the bot an administrator: what to do, no title.
        await s.tg.sim.create_channel("Ada's films", username="adafilms", owner_id=ada)
        unmanaged = await s.offer(ada, "Gate slot", "@adafilms")
        assert "make this bot an administrator" in unmanaged["text"]
        assert "Ada's films" not in unmanaged["text"]

        # The bot's storage chat and its gate channel, even though Ada is an administrator there.
        owner = await s.tg.sim.create_user("Owner")
        storage = await s.tg.sim.create_channel("Files", private=True, owner_id=owner["id"])
        gate = await s.tg.sim.create_channel("News", username="ownernews", owner_id=owner["id"])
        for chat in (storage, gate):
            await s.tg.sim.make_admin(chat["id"], bot_id)
            await s.tg.sim.make_admin(chat["id"], ada)
        await s.features.bot_settings.set_storage_chat(bot_id, storage["id"])
        await s.features.channels.add(bot_id, "@ownernews")
        await s.features.bot_settings.set_gate(bot_id, [(gate["id"], False)])
        files = await s.offer(ada, "Gate slot", str(storage["id"]))
        assert "where the bot keeps its files" in files["text"]
        in_gate = await s.offer(ada, "Gate slot", "@ownernews")
        assert "already in the bot's gate" in in_gate["text"]
        assert await pool.fetchval("SELECT count(*) FROM shop_orders") == 0


async def test_a_hash_pays_one_order_once_and_the_wrong_ones_are_explained(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path) as s:
        ada, bob = await s.advertiser(), await s.advertiser("fa")
        first = await s.book(ada, "Banner", "Visit Ada\nhttps://ada.example")
        second = await s.book(bob, "Banner", "Visit Bob\nhttps://bob.example")
        first = await s.features.shop.approve(first["id"], "owner")
        await s.features.shop.approve(second["id"], "owner")
        paid = await s.tg.sim.tron_usdt(s.payer, s.address, first["due_usdt"], solidify="now")
        await s.say(ada, paid["hash"])
        await s.state_of(first["id"], "running")
        # Bob replays Ada's transaction: it already paid an order.
        await s.say(bob, paid["hash"])
        refused = await s.wait_for(bob, text_has("پیش‌تر یک سفارش را پرداخت کرده است"))
        assert paid["hash"][:8] in refused["text"] and f"#{second['id']}" in refused["text"]
        # A look-alike token and coins sent elsewhere are turned down, each with its reason.
        fake = await s.tg.sim.tron_lookalike(s.payer, s.address, "5", solidify="now")
        await s.say(bob, fake["hash"])
        elsewhere = await s.tg.sim.tron_usdt(s.payer, s.payer, "5", solidify="now")
        await s.say(bob, elsewhere["hash"])

        async def decided() -> bool:
            order = await s.features.shop.order(second["id"])
            rejected = [p for p in order["payments"] if p["status"] == "rejected"]
            return len(rejected) >= 3

        await eventually(decided, timeout=20)
        order = await s.features.shop.order(second["id"])
        reasons = {p["tx_hash"]: p["reason"] for p in order["payments"]}
        assert reasons == {
            paid["hash"]: "already_used",
            fake["hash"]: "no_usdt",
            elsewhere["hash"]: "wrong_address",
        }
        assert order["state"] == "awaiting_payment"
        wrong = next(p for p in order["payments"] if p["reason"] == "wrong_address")
        assert wrong["to_address"] == s.payer
        # The gate's welcome offers the shop while it is on.
        await s.say(bob, "hello")
        welcome = await s.wait_for(bob, text_has("سلام"))
        assert "تبلیغ" in welcome["buttons"][0][0]["text"]


async def test_an_unconfirmed_payment_waits_and_then_counts(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path, accept_trx=False) as s:
        ada = await s.advertiser()
        order = await s.book(ada, "Banner", "Visit Ada\nhttps://ada.example")
        approved = await s.features.shop.approve(order["id"], "owner")
        assert approved["usdt_per_trx"] is None
        request = await s.wait_for(ada, text_has("Please pay"))
        assert "TRX" not in request["text"]
        tx = await s.tg.sim.tron_usdt(s.payer, s.address, approved["due_usdt"], solidify="never")
        await s.say(ada, "not a hash 0x1234")
        await s.say(ada, f"0x{tx['hash'].upper()}")
        await s.wait_for(ada, text_has("not confirmed yet"))
        assert (await s.features.shop.order(order["id"]))["state"] == "awaiting_payment"
        await s.tg.sim.tron_solidify(tx["hash"])
        await s.wait_for(ada, text_has("paid in full"))
        running = await s.state_of(order["id"], "running")
        assert running["ends_at"] > datetime.now(UTC) + timedelta(days=6)


async def test_bad_settings_and_a_price_source_outage_are_clear_errors(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path) as s:
        bot_id = s.bot["id"]
        broken = s.address[:-1] + ("A" if s.address[-1] != "A" else "B")
        with pytest.raises(Invalid, match="TRON address"):
            await s.features.shop.save_settings(bot_id, ShopConfig(enabled=True, address=broken))
        saved = await s.features.shop.save_settings(
            bot_id, ShopConfig(enabled=True, address=s.address, api_key="secret-key-1234")
        )
        assert saved["api_key_tail"] == "1234"
        stored = await pool.fetchval("SELECT api_key FROM shop_settings WHERE bot_id = $1", bot_id)
        assert b"secret-key-1234" not in bytes(stored)
        with pytest.raises(Invalid, match="more than 0"):
            await s.features.shop.create_product(bot_id, ProductDraft("banner", "x", "0", days=1))
        ada = await s.advertiser()
        order = await s.book(ada, "Banner", "Visit Ada\nhttps://ada.example")
        await s.tg.sim.price_down()
        with pytest.raises(Conflict, match="no TRX price"):
            await s.features.shop.approve(order["id"], "owner")
        assert (await s.features.shop.order(order["id"]))["state"] == "submitted"
        await s.tg.sim.price_up()
        await s.features.shop.approve(order["id"], "owner")
        with pytest.raises(Conflict):
            await s.features.shop.approve(order["id"], "owner")


async def test_a_trx_rate_needs_two_price_sources_that_agree(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """L2: one source alone, or two that disagree by more than 3 %, is no price; one source
    far off among three is outvoted, and the order names the two it took the rate from."""
    async with shop(pool, db_dsn, tmp_path) as s:
        ada = await s.advertiser()
        order = await s.book(ada, "Banner", "Visit Ada\nhttps://ada.example")
        await s.tg.sim.set_price("0.25")
        await s.tg.sim.set_price("0.5", source="kraken")
        await s.tg.sim.price_down("binance")
        with pytest.raises(
            Conflict, match=r"disagree by more than 3% \(coingecko 0\.25, kraken 0\.5"
        ):
            await s.features.shop.approve(order["id"], "owner")
        await s.tg.sim.price_down("coingecko")
        with pytest.raises(Conflict, match=r"no TRX price .* only kraken answered"):
            await s.features.shop.approve(order["id"], "owner")
        assert (await s.features.shop.order(order["id"]))["state"] == "submitted"
        await s.tg.sim.price_up()
        approved = await s.features.shop.approve(order["id"], "owner")
        assert (approved["usdt_per_trx"], approved["rate_source"]) == ("0.25", "coingecko+binance")


async def test_a_paid_post_goes_out_as_a_broadcast_and_a_banner_follows_content_until_it_ends(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path) as s:
        bot_id = s.bot["id"]
        await s.features.shop.create_product(bot_id, ProductDraft("broadcast", "Post", "20"))
        fans = await add_people(s.tg.sim, pool, bot_id, BOT, 5)
        ada = await s.advertiser()
        post = await s.book(ada, "Post", "<b>Big</b> sale\nShop - https://shop.example")
        assert post["material"]["post"]["text"] == "&lt;b&gt;Big&lt;/b&gt; sale"
        await s.features.shop.approve(post["id"], "owner")
        await s.features.shop.mark_paid(post["id"], "paid by bank transfer", "owner")
        done = await s.state_of(post["id"], "completed", timeout=30)
        assert done["broadcast_id"] is not None and done["report"] == {"reached": 6}
        got = await s.messages(fans[0])
        # Telegram stores a button's URL normalised, with the path's slash.
        assert got[-1]["buttons"] == [[{"text": "Shop", "url": "https://shop.example/"}]]
        await s.wait_for(ada, text_has("your post reached 6 people"))
        marked = [t for t in done["timeline"] if t["kind"] == "marked_paid"]
        assert marked[0]["data"]["reason"] == "paid by bank transfer"

        banner = await s.book(ada, "Banner", "Night films\nhttps://films.example")
        banner = await s.features.shop.approve(banner["id"], "owner")
        paid = await s.tg.sim.tron_usdt(s.payer, s.address, banner["due_usdt"], solidify="now")
        await s.say(ada, paid["hash"])
        await s.state_of(banner["id"], "running")
        content = await s.features.contents.create(
            bot_id,
            NewContent(created_by="test", kind="text", items=[{"kind": "text", "text": "Film"}]),
        )
        viewer = await s.advertiser()
        await s.tg.sim.open_link(viewer, BOT, content["code"])
        shown = await s.wait_for(viewer, text_has("Night films"))
        assert shown["buttons"][0][0]["url"] == "https://films.example/"
        await pool.execute("UPDATE shop_orders SET ends_at = now() WHERE id = $1", banner["id"])
        ended = await s.state_of(banner["id"], "completed")
        assert ended["report"] == {"shown": 1}
        await s.wait_for(ada, text_has("your banner was shown 1 times"))


async def test_a_long_post_is_shortened_in_its_summary_as_text_and_can_be_submitted(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path) as s:
        await s.features.shop.create_product(s.bot["id"], ProductDraft("broadcast", "Post", "20"))
        ada = await s.advertiser()
        text = "a" * 295 + " <b>bold</b> & <i>more</i>" * 20
        summary = await s.offer(ada, "Post", text, is_summary)
        # The summary shows the first 300 characters as typed, tags and all, then "…".
        assert f"📝 {text[:300]}…" in summary["text"]
        await s.press(ada, summary, "✅")
        order = await s.state_of((await s.order_of(ada))["id"], "submitted")
        assert order["material"]["post"]["text"].startswith("a" * 295 + " &lt;b&gt;bold")


async def test_a_trongrid_outage_is_retried_and_the_order_waits(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path) as s:
        ada, order = await s.approved_banner()
        await s.tg.sim.tron_fault("500", count=2)
        tx = await s.tg.sim.tron_usdt(s.payer, s.address, order["due_usdt"], solidify="now")
        await s.say(ada, tx["hash"])

        async def failed_once() -> bool:
            row = await pool.fetchrow(
                "SELECT last_error, status FROM shop_payments WHERE tx_hash = $1", tx["hash"]
            )
            return row is not None and (
                row["last_error"] is not None or row["status"] != "checking"
            )

        await eventually(failed_once)
        # Backed off for seconds; the order stays as it was meanwhile.
        assert (await s.features.shop.order(order["id"]))["state"] == "awaiting_payment"
        await pool.execute("UPDATE shop_payments SET next_check_at = now()")
        await s.state_of(order["id"], "running", timeout=30)
        payment = (await s.features.shop.order(order["id"]))["payments"][0]
        assert payment["status"] == "credited" and payment["checks"] >= 2


async def test_an_order_sent_back_for_a_change_is_resubmitted_from_the_bot(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path) as s:
        ada = await s.advertiser()
        order = await s.book(ada, "Banner", "Visit Ada\nhttps://ada.example")
        await s.features.shop.ask_change(order["id"], "Say what you sell", "owner")
        asked = await s.wait_for(ada, text_has("Say what you sell"))
        assert "needs a change" in asked["text"]
        # The next message is the new material: the same summary, then Submit.
        await s.say(ada, "Ada's films, every night\nhttps://ada.example/films")
        summary = await s.wait_for(ada, text_has("every night"))
        await s.press(ada, summary, "✅")
        again = await s.state_of(order["id"], "submitted")
        assert again["material"] == {
            "text": "Ada's films, every night",
            "url": "https://ada.example/films",
        }
        kinds = [step["kind"] for step in again["timeline"]]
        assert kinds == ["submitted", "change_asked", "resubmitted"]
        assert await pool.fetchval("SELECT count(*) FROM shop_orders") == 1


async def test_over_payments_expiry_and_a_hash_nobody_knows(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path) as s:
        ada, bob, cy = await s.advertiser(), await s.advertiser(), await s.advertiser()
        over = await s.book(ada, "Banner", "Visit Ada\nhttps://ada.example")
        late = await s.book(bob, "Banner", "Visit Bob\nhttps://bob.example")
        ghost = await s.book(cy, "Banner", "Visit Cy\nhttps://cy.example")
        for order in (over, late, ghost):
            await s.features.shop.approve(order["id"], "owner")

        async def assign(tx_hash: str, order_id: int) -> None:
            """The owner credits a transfer that matched no order (it waits, once seen)."""
            found: list[int] = []

            async def seen() -> bool:
                items = (await s.features.shop.transfers("unattributed"))["items"]
                found[:] = [t["id"] for t in items if t["tx_hash"] == tx_hash]
                return bool(found)

            await eventually(seen)
            await s.features.shop.assign_transfer(found[0], order_id, "owner")

        # Paying more than the price is not the exact amount: the owner assigns it. Paid,
        # and the excess recorded and told.
        tx = await s.tg.sim.tron_usdt(s.payer, s.address, "7.25", solidify="now")
        await s.say(ada, tx["hash"])
        await assign(tx["hash"], over["id"])
        await s.wait_for(ada, text_has("2.25 USDT more than the price"))
        paid = await s.state_of(over["id"], "running")
        assert (paid["paid_usdt"], paid["extra_usdt"]) == ("7.25", "2.25")

        # A part payment, then the 48 hours run out: expired, the part recorded.
        part = await s.tg.sim.tron_usdt(s.payer, s.address, "1", solidify="now")
        await s.say(bob, part["hash"])
        await assign(part["hash"], late["id"])
        await s.state_of(late["id"], "partly_paid")
        await pool.execute(
            "UPDATE shop_orders SET due_at = now() - interval '1 second' WHERE id = $1",
            late["id"],
        )
        expired = await s.state_of(late["id"], "expired")
        assert expired["paid_usdt"] == "1"
        await s.wait_for(bob, text_has("The 1 USDT you paid is recorded"))
        # A hash submitted after that is refused at the door: no order is waiting.
        await s.say(bob, "ef" * 32)
        await s.wait_for(bob, text_has("no order waiting for payment"))

        # A hash the network never heard of waits 15 minutes, then is turned down.
        await s.say(cy, "0123456789abcdef" * 4)

        async def waiting() -> bool:
            error = await pool.fetchval(
                "SELECT last_error FROM shop_payments WHERE order_id = $1", ghost["id"]
            )
            return bool(error == "waiting: unknown")

        await eventually(waiting)
        await pool.execute(
            "UPDATE shop_payments SET submitted_at = now() - interval '16 minutes',"
            " next_check_at = now() WHERE order_id = $1",
            ghost["id"],
        )
        await s.wait_for(cy, text_has("does not know it"))
        refused = (await s.features.shop.order(ghost["id"]))["payments"][0]
        assert (refused["status"], refused["reason"]) == ("rejected", "unknown")
        assert (await s.features.shop.order(ghost["id"]))["state"] == "awaiting_payment"
