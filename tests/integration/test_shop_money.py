"""Money you can trust, end to end on the simulated Telegram and TronGrid: a transfer pays the
order whose exact amount it is, whoever sends its hash; anything else waits for the owner; the
advertiser's side has limits; a paid ad starts once and always."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from sponsorbot.features.broadcasts.post import Post
from sponsorbot.features.broadcasts.service import Draft as BroadcastDraft
from sponsorbot.features.errors import Conflict
from sponsorbot.features.shop.fulfil import Fulfilment, maker
from sponsorbot.features.shop.orders import Attention
from sponsorbot.features.shop.products import ProductDraft
from sponsorbot.features.shop.runner import BUDGET_SPENT, ShopRunner
from sponsorbot.features.shop.settings import CALLS_PER_HOUR
from sponsorbot.tron.verifier import credited_usdt
from tests.integration.broadcastkit import add_people
from tests.integration.shopkit import WATCHING, Shop, add_order, shop
from tests.kit import eventually


def text_has(part: str) -> Callable[[dict[str, Any]], bool]:
    """A check of a message: its text or caption holds `part`."""
    return lambda m: part in (m.get("text") or m.get("caption") or "")


async def claim_of(s: Shop, order_id: int, tx_hash: str) -> dict[str, Any]:
    """The order's claim of `tx_hash` once it is decided."""
    found: list[dict[str, Any]] = []

    async def decided() -> bool:
        order = await s.features.shop.order(order_id)
        found[:] = [
            p for p in order["payments"] if p["tx_hash"] == tx_hash and p["status"] != "checking"
        ]
        return bool(found)

    await eventually(decided, timeout=20)
    return found[0]


async def test_a_transfer_pays_the_order_whose_exact_amount_it_is_whoever_claims_it_first(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path) as s:
        ada, mallory = await s.advertiser(), await s.advertiser()
        mine = await s.book(ada, "Banner", "Visit Ada\nhttps://ada.example")
        cheap = await s.book(mallory, "Banner", "Visit Mal\nhttps://mal.example")
        await s.tg.sim.set_price("0.25")
        mine = await s.features.shop.approve(mine["id"], "owner")
        cheap = await s.features.shop.approve(cheap["id"], "owner")
        # Each open order asks for its own amount: the price and a tail of millionths.
        assert mine["due_usdt"] != cheap["due_usdt"] and mine["due_trx"] != cheap["due_trx"]
        assert Decimal("5") < Decimal(mine["due_usdt"]) < Decimal("5.01")
        request = await s.wait_for(ada, text_has("Please pay exactly"))
        assert mine["due_usdt"] in request["text"] and mine["due_trx"] in request["text"]

        paid = await s.tg.sim.tron_usdt(s.payer, s.address, mine["due_usdt"], solidify="now")
        # Mallory watches the shop's address and sends the new hash before Ada does.
        await s.say(mallory, paid["hash"])
        refused = await claim_of(s, cheap["id"], paid["hash"])
        assert (refused["status"], refused["reason"]) == ("rejected", "already_used")
        running = await s.state_of(mine["id"], "running")
        assert running["paid_usdt"] == mine["due_usdt"]
        assert (await s.features.shop.order(cheap["id"]))["state"] == "awaiting_payment"
        await s.wait_for(ada, text_has("paid in full"))
        # Ada's own hash, sent later, finds her order paid already (nothing counts twice).
        await s.say(ada, paid["hash"])
        await s.wait_for(ada, text_has("no order waiting for payment"))
        transfers = await pool.fetch("SELECT order_id, state FROM shop_transfers")
        assert [tuple(t) for t in transfers] == [(mine["id"], "credited")]


async def test_what_matches_no_order_waits_for_the_owner_who_assigns_it(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path) as s:
        ada = await s.advertiser()
        await s.own_channel(ada)
        early = await s.tg.sim.tron_usdt(s.payer, s.address, "10", solidify="now")
        order = await s.book(ada, "Gate slot", "@adachannel")
        await s.tg.sim.set_price("0.25")
        order = await s.features.shop.approve(order["id"], "owner")
        # The approval came after the transfer (the simulator's blocks are made now).
        await pool.execute(
            "UPDATE shop_orders SET approved_at = now() + interval '10 minutes' WHERE id = $1",
            order["id"],
        )

        # Made before the approval: it pays nothing, whatever its amount.
        await s.say(ada, early["hash"])
        assert (await claim_of(s, order["id"], early["hash"]))["reason"] == "too_early"
        await pool.execute(
            "UPDATE shop_orders SET approved_at = now() - interval '1 minute' WHERE id = $1",
            order["id"],
        )
        # A look-alike token moves no USDT.
        fake = await s.tg.sim.tron_lookalike(s.payer, s.address, order["due_usdt"], solidify="now")
        await s.say(ada, fake["hash"])
        assert (await claim_of(s, order["id"], fake["hash"]))["reason"] == "no_usdt"

        # A part payment is not the order's exact amount: held for the owner, and Ada is told.
        part = await s.tg.sim.tron_usdt(s.payer, s.address, "4", solidify="now")
        await s.say(ada, part["hash"])
        held = await claim_of(s, order["id"], part["hash"])
        assert (held["status"], held["reason"]) == ("held", "no_match")
        await s.wait_for(ada, text_has("kept for the owner"))
        assert (await s.features.shop.order(order["id"]))["paid_usdt"] == "0"
        waiting = await s.features.shop.transfers("unattributed")
        assert [t["tx_hash"] for t in waiting["items"]] == [part["hash"]]
        assert waiting["items"][0]["claims"][0]["order_id"] == order["id"]

        # The owner assigns it: partly paid, and a new exact amount for the rest.
        await s.features.shop.assign_transfer(waiting["items"][0]["id"], order["id"], "owner")
        partly = await s.state_of(order["id"], "partly_paid")
        assert partly["paid_usdt"] == "4"
        rest = Decimal(partly["due_usdt"])
        assert Decimal("6") < rest < Decimal("6.01") and partly["due_usdt"] != order["due_usdt"]
        assert (await claim_of(s, order["id"], part["hash"]))["status"] == "credited"
        with pytest.raises(Conflict):
            await s.features.shop.assign_transfer(waiting["items"][0]["id"], order["id"], "owner")

        # The rest, in TRX at the locked rate, to the exact new amount.
        trx = await s.tg.sim.tron_trx(s.payer, s.address, partly["due_trx"], solidify="now")
        await s.say(ada, trx["hash"])
        running = await s.state_of(order["id"], "running")
        assert running["campaign_id"] is not None
        trx_worth = credited_usdt(Decimal(partly["due_trx"]), Decimal("0.25"))
        assert Decimal(running["paid_usdt"]) == 4 + trx_worth
        credits = await pool.fetchval(
            "SELECT sum(credited_usdt) FROM shop_transfers WHERE order_id = $1", order["id"]
        )
        assert str(credits.normalize()) == running["paid_usdt"]


async def test_the_database_refuses_two_open_orders_of_a_shop_one_amount(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path, accept_trx=False) as s:
        ada, bob = await s.advertiser(), await s.advertiser()
        first = await s.book(ada, "Banner", "Visit Ada\nhttps://ada.example")
        second = await s.book(bob, "Banner", "Visit Bob\nhttps://bob.example")
        first = await s.features.shop.approve(first["id"], "owner")
        second = await s.features.shop.approve(second["id"], "owner")
        # Amounts are handed out distinct; the unique index is the database's own guard within
        # a shop. (Two shops sharing an address: attribution.py leaves such an amount to the
        # owner, tests/unit/test_shop_attribution.py.)
        with pytest.raises(asyncpg.UniqueViolationError):
            await pool.execute(
                "UPDATE shop_orders SET due_usdt = $1 WHERE id = $2",
                Decimal(first["due_usdt"]),
                second["id"],
            )


async def test_the_advertiser_side_has_limits(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path) as s:
        ada = await s.advertiser()
        orders = [
            await s.book(ada, "Banner", f"Visit Ada {n}\nhttps://ada.example/{n}") for n in range(3)
        ]
        # A fourth open order is refused, with the reason.
        await s.offer(ada, "Banner", "Visit Ada 4\nhttps://ada.example/4")
        before = len(await s.messages(ada))
        summary = (await s.messages(ada))[-1]
        await s.press(ada, summary, "✅")
        await s.next_message(ada, before, text_has("3 open orders"))
        assert await pool.fetchval("SELECT count(*) FROM shop_orders") == 3

        await s.features.shop.approve(orders[0]["id"], "owner")
        # Three junk hashes are checked at once at most; the fourth is refused.
        for n in range(3):
            await s.say(ada, f"{n:064x}")
        before = len(await s.messages(ada))
        await s.say(ada, f"{9:064x}")
        await s.next_message(ada, before, text_has("Too many transaction hashes"))
        count = await pool.fetchval(
            "SELECT count(*) FROM shop_payments WHERE order_id = $1", orders[0]["id"]
        )
        assert count == 3


async def test_a_paid_post_found_unsent_goes_out(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path) as s:
        bot_id = s.bot["id"]
        await s.features.shop.create_product(bot_id, ProductDraft("broadcast", "Post", "20"))
        await add_people(s.tg.sim, pool, bot_id, "adshop_bot", 2)
        ada = await s.advertiser()
        post = await s.book(ada, "Post", "Big sale")
        await s.features.shop.approve(post["id"], "owner")
        # A worker died after making the broadcast and before sending it: the order is
        # "running" with a draft. The clock sends it.
        draft = BroadcastDraft(title="Ad", post=Post(text="Big sale"))
        made = (await s.features.broadcasts.create(bot_id, draft, maker(post["id"])))["id"]
        await pool.execute(
            "UPDATE shop_orders SET state = 'running', broadcast_id = $2, paid_usdt = price_usdt"
            " WHERE id = $1",
            post["id"],
            made,
        )
        done = await s.state_of(post["id"], "completed", timeout=30)
        assert done["report"] == {"reached": 3}


# Two more checks of an unknown hash are two of the runner's 3 s waits: the slow tier.
@pytest.mark.slow
async def test_an_order_with_a_hash_in_check_still_expires_in_bounded_time(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path) as s:
        ada, order = await s.approved_banner()
        await s.say(ada, "ab" * 32)  # the network never heard of it: checked for 15 minutes

        async def checking() -> bool:
            return bool(
                await pool.fetchval(
                    "SELECT count(*) FROM shop_payments WHERE order_id = $1", order["id"]
                )
            )

        await eventually(checking)
        await pool.execute(
            "UPDATE shop_orders SET expires_at = now() - interval '1 minute' WHERE id = $1",
            order["id"],
        )
        # Just past its deadline, the hash in check keeps it open (two more checks of it mean
        # the clock ran after the deadline moved)...
        checks = await pool.fetchval(
            "SELECT checks FROM shop_payments WHERE order_id = $1", order["id"]
        )

        async def checked_twice() -> bool:
            now = await pool.fetchval(
                "SELECT checks FROM shop_payments WHERE order_id = $1", order["id"]
            )
            return bool(now >= checks + 2)

        await eventually(checked_twice)
        assert (await s.features.shop.order(order["id"]))["state"] == "awaiting_payment"
        # ...but not for longer than the wait for a hash and a margin.
        await pool.execute(
            "UPDATE shop_orders SET expires_at = now() - interval '21 minutes' WHERE id = $1",
            order["id"],
        )
        await s.state_of(order["id"], "expired")


async def test_runners_racing_on_one_database_credit_each_transfer_once(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path, accept_trx=False) as s:
        # A slow TronGrid: each check takes a while, so runners overlap on every hash.
        await s.tg.sim.tron_set_network(delay_s=0.2)
        people = [await s.advertiser() for _ in range(6)]
        orders = []
        for n, person in enumerate(people):
            material = {"text": f"Ad {n}", "url": f"https://ad{n}.example"}
            order_id = await add_order(pool, s.bot["id"], "banner", person, material)
            orders.append(await s.features.shop.approve(order_id, "owner"))
        # Each order paid its exact amount; two more transfers match no order.
        paid = [
            await s.tg.sim.tron_usdt(s.payer, s.address, o["due_usdt"], solidify="now")
            for o in orders
        ]
        stray = [
            await s.tg.sim.tron_usdt(s.payer, s.address, amount, solidify="now")
            for amount in ("1", "2.5")
        ]
        # Every hash is sent twice, for two people's orders.
        for n, tx in enumerate(paid + stray):
            for order in (orders[n % 6], orders[(n + 1) % 6]):
                await s.features.shop.add_hash(order["id"], tx["hash"], "test")

        services = s.features
        fulfil = Fulfilment(pool, services.campaigns, services.broadcasts)
        engine = s.run.engine
        runners = [
            ShopRunner(services.shop, engine.settings, engine.api.session, fulfil) for _ in range(3)
        ]

        async def race() -> None:
            while await pool.fetchval(
                "SELECT count(*) FROM shop_payments WHERE status = 'checking'"
            ):
                await pool.execute("UPDATE shop_payments SET next_check_at = now()")
                await asyncio.gather(*(r.tick(pool) for r in runners))

        await asyncio.wait_for(race(), timeout=60)
        for order in orders:
            await s.state_of(order["id"], "running")

    credits = await pool.fetch(
        "SELECT tx_hash, order_id, credited_usdt FROM shop_transfers WHERE state = 'credited'"
    )
    by_hash = {tx["hash"]: o for tx, o in zip(paid, orders, strict=True)}
    assert {r["tx_hash"]: r["order_id"] for r in credits} == {
        h: o["id"] for h, o in by_hash.items()
    }
    assert sum(r["credited_usdt"] for r in credits) == sum(Decimal(o["due_usdt"]) for o in orders)
    held = await pool.fetch("SELECT tx_hash FROM shop_transfers WHERE state = 'unattributed'")
    assert {r["tx_hash"] for r in held} == {tx["hash"] for tx in stray}
    for order in orders:
        row = await pool.fetchrow(
            "SELECT paid_usdt, (SELECT count(*) FROM shop_order_log l WHERE l.bot_id = o.bot_id"
            " AND l.order_id = o.id AND l.kind = 'started') AS starts FROM shop_orders o"
            " WHERE id = $1",
            order["id"],
        )
        assert row["paid_usdt"] == Decimal(order["due_usdt"]) and row["starts"] == 1
    claims = await pool.fetch(
        "SELECT tx_hash, count(*) FILTER (WHERE status = 'credited') AS n FROM shop_payments"
        " GROUP BY tx_hash"
    )
    assert all(c["n"] <= 1 for c in claims)


async def test_a_payer_who_never_sends_the_hash_is_credited_by_the_watcher(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path, options=WATCHING) as s:
        ada = await s.advertiser()
        await s.own_channel(ada)
        order = await s.book(ada, "Gate slot", "@adachannel")
        await s.tg.sim.set_price("0.25")
        order = await s.features.shop.approve(order["id"], "owner")
        # A transfer nobody asked for, while the order is open: it waits for the owner, with
        # nobody's claim.
        gift = await s.tg.sim.tron_usdt(s.payer, s.address, "3", solidify="now")

        async def listed() -> bool:
            items = (await s.features.shop.transfers("unattributed"))["items"]
            return [t["tx_hash"] for t in items] == [gift["hash"]]

        await eventually(listed, timeout=30)
        waiting = (await s.features.shop.transfers("unattributed"))["items"][0]
        assert waiting.claims == () and waiting.reason == "no_match"
        assert (await s.features.shop.order(order["id"]))["state"] == "awaiting_payment"
        # Then the payment, in TRX, its exact amount, and no hash sent.
        await s.tg.sim.tron_trx(s.payer, s.address, order["due_trx"], solidify="now")
        running = await s.state_of(order["id"], "running", timeout=30)
        assert running["campaign_id"] is not None
        await s.wait_for(ada, text_has("paid in full"))
        credited = (await s.features.shop.transfers("credited"))["items"]
        assert [(t["order_id"], t["matched_by"]) for t in credited] == [(order["id"], "amount")]


async def test_a_trx_rate_is_kept_a_day_then_quoted_again(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path) as s:
        ada, order = await s.approved_banner("0.5")
        # Locked a day ago at 0.25 (a price is cached for minutes, so the day is written in).
        tail = Decimal(order["due_usdt"]) - 5
        await pool.execute(
            "UPDATE shop_orders SET rate_at = now() - interval '25 hours', usdt_per_trx = 0.25,"
            " due_trx = 20 + $2::numeric WHERE id = $1",
            order["id"],
            tail,
        )
        order = await s.features.shop.order(order["id"])
        assert order["due_trx"].startswith("20.00")
        told = await s.wait_for(ada, text_has("has a new one: 0.5 USDT per TRX"))
        again = await s.features.shop.order(order["id"])
        assert again["usdt_per_trx"] == "0.5" and again["due_trx"].startswith("10.00")
        # The USDT amount the advertiser was told stays; the TRX one keeps the order's tail.
        assert again["due_usdt"] == order["due_usdt"]
        assert again["due_trx"][-6:] == order["due_trx"][-6:]
        assert again["due_trx"] in told["text"] and again["due_usdt"] in told["text"]
        locks = [t for t in again["timeline"] if t["kind"] == "rate_locked"]
        assert len(locks) == 2 and Decimal(locks[-1]["data"]["rate"]) == Decimal("0.5")
        # A payment at the new rate counts.
        paid = await s.tg.sim.tron_trx(s.payer, s.address, again["due_trx"], solidify="now")
        await s.say(ada, paid["hash"])
        await s.state_of(order["id"], "running", timeout=30)


async def test_a_shop_that_spent_its_trongrid_budget_waits_for_the_next_hour(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path, accept_trx=False) as s:
        ada, order = await s.approved_banner()
        # The hour's calls are all used (by an advertiser's junk hashes, say).
        await pool.execute(
            "UPDATE shop_settings SET calls = $2, calls_hour = date_trunc('hour', now())"
            " WHERE bot_id = $1",
            s.bot["id"],
            CALLS_PER_HOUR,
        )
        paid = await s.tg.sim.tron_usdt(s.payer, s.address, order["due_usdt"], solidify="now")
        await s.say(ada, paid["hash"])

        async def put_off() -> bool:
            row = await pool.fetchrow(
                "SELECT last_error, next_check_at > now() + interval '1 second' AS later,"
                " checks FROM shop_payments WHERE order_id = $1",
                order["id"],
            )
            return row is not None and row["last_error"] == BUDGET_SPENT and row["later"]

        await eventually(put_off)
        settings = await s.features.shop.settings(s.bot["id"])
        assert settings["trongrid_calls"] == settings["trongrid_budget"] == CALLS_PER_HOUR
        assert (await s.features.shop.order(order["id"]))["state"] == "awaiting_payment"
        # The next hour (here: the count starts again) it is checked and counts.
        await pool.execute(
            "UPDATE shop_settings SET calls_hour = now() - interval '2 hours' WHERE bot_id = $1",
            s.bot["id"],
        )
        await pool.execute("UPDATE shop_payments SET next_check_at = now()")
        await s.state_of(order["id"], "running", timeout=30)
        assert (await s.features.shop.settings(s.bot["id"]))["trongrid_calls"] >= 2


async def test_the_dashboard_shows_stuck_orders_and_transfers_waiting(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path) as s:
        _, order = await s.approved_banner()
        assert await s.features.shop.attention() == Attention(stuck=(), waiting_transfers=0)
        # Paid twenty minutes ago, its ad never started (a channel right missing, say).
        await pool.execute(
            "UPDATE shop_orders SET state = 'paid', start_tries = 3, start_after = now()"
            " + interval '1 hour', updated_at = now() - interval '20 minutes' WHERE id = $1",
            order["id"],
        )
        await pool.execute(
            "INSERT INTO shop_transfers (network, tx_hash, coin, amount, to_address, block_time,"
            " reason) SELECT 'mainnet', $1, 'USDT', 3, address, now(), 'no_match'"
            " FROM shop_orders WHERE id = $2",
            "ab" * 32,
            order["id"],
        )
        seen = await s.features.shop.attention()
        assert [o.id for o in seen.stuck] == [order["id"]]
        assert seen.stuck[0].start_tries == 3 and seen.waiting_transfers == 1
