"""A Hypothesis state machine over orders' lives on the real database: orders are approved,
paid their exact amounts or any amount, in USDT or TRX, transfers are replayed, held ones are
assigned by the owner, orders expire. After every step the books balance: an order's paid
amount is the sum of its credits, no transfer is credited twice, no two open orders ask for one
amount, and each state agrees with what was paid."""

from __future__ import annotations

import asyncio
import itertools
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import asyncpg
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from sponsorbot.db.pool import connect, on_citus
from sponsorbot.features.shop import ledger, queries
from sponsorbot.features.shop.attribution import TAIL_CEILING
from sponsorbot.features.shop.rules import PAYABLE
from sponsorbot.tron.verifier import Coin, Verdict
from tests.examples import examples

BOT = 4242
ADDRESS = b"\x41" + bytes(range(20))
PAYER = b"\x41" + bytes(range(20, 40))
RATE = Decimal("0.25")
SETUP = f"""
INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path, webhook_secret_hash)
VALUES ({BOT}, 'ledger_bot', '', 'xxxx', 'polling', 'path-ledger', '');
INSERT INTO shop_products (bot_id, kind, title, price_usdt, days)
VALUES ({BOT}, 'banner', 'B', 5, 1);
"""
RESET = "TRUNCATE shop_transfers, shop_order_log, shop_payments, shop_orders"
ORDER = """
INSERT INTO shop_orders (bot_id, product_id, kind, title, days, user_id, material, price_usdt,
                         state, network, address, accept_usdt, accept_trx, approved_at,
                         usdt_per_trx, expires_at)
SELECT $1, id, 'banner', 'B', 1, 42, '{}', $2, 'awaiting_payment', 'mainnet', $3, true, true,
       now() - interval '1 hour', $4, now() + interval '1 day'
FROM shop_products WHERE bot_id = $1
RETURNING id
"""
EXPIRE = "UPDATE shop_orders SET state = 'expired', updated_at = now() WHERE id = $1"
BOOKS = """
SELECT o.id, o.state, o.price_usdt, o.paid_usdt, o.due_usdt, o.due_trx,
       COALESCE((SELECT sum(t.credited_usdt) FROM shop_transfers t
                 WHERE t.order_id = o.id AND t.state = 'credited'), 0) AS credits
FROM shop_orders o ORDER BY o.id
"""
HELD = "SELECT id FROM shop_transfers WHERE state = 'unattributed' ORDER BY id"

prices = st.decimals(Decimal("1"), Decimal("50"), places=2)
amounts = st.decimals(Decimal("0.5"), Decimal("60"), places=6)


class OrderLives(RuleBasedStateMachine):
    """Orders of one shop address and the transfers into it."""

    dsn = ""
    orders = Bundle("orders")
    hashes = Bundle("hashes")

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.conn: asyncpg.Connection = self.run(connect(self.dsn, role="test"))
        # On a Citus cluster the candidates are locked in the runner's Citus form.
        self.citus = bool(self.run(on_citus(self.conn)))
        self.run(self.conn.execute(RESET))
        self.numbers = itertools.count(1)

    def run(self, coroutine: Any) -> Any:
        return self.loop.run_until_complete(coroutine)

    def teardown(self) -> None:
        self.run(self.conn.close())
        self.loop.close()

    @initialize(target=orders, price=prices)
    def first_order(self, price: Decimal) -> int:
        return self.approve(price)

    @rule(target=orders, price=prices)
    def another_order(self, price: Decimal) -> int:
        return self.approve(price)

    def approve(self, price: Decimal) -> int:
        async def go() -> int:
            async with self.conn.transaction():
                order_id: int = await self.conn.fetchval(ORDER, BOT, price, ADDRESS, RATE)
                row = await self.conn.fetchrow(queries.ORDER, order_id)
                await ledger.assign_due(self.conn, row, price)
                return order_id

        return int(self.run(go()))

    def settle(self, tx_hash: str, coin: Coin, amount: Decimal) -> None:
        """What the runner does with a verified transfer, minus the claim."""
        verdict = Verdict("credit", None, coin, amount, PAYER, ADDRESS, None, datetime.now(UTC))

        async def go() -> None:
            async with self.conn.transaction():
                transfer = await ledger.record(self.conn, "mainnet", tx_hash, verdict)
                if transfer["state"] != "unattributed":
                    return
                _outcome, target = await ledger.match(self.conn, transfer, self.citus)
                if target is not None:
                    await ledger.credit(
                        self.conn, transfer, target, "amount", "system", datetime.now(UTC), {}
                    )

        self.run(go())

    def new_hash(self) -> str:
        return f"{next(self.numbers):064x}"

    @rule(target=hashes, order=orders, coin=st.sampled_from(["USDT", "TRX"]))
    def pay_exactly(self, order: int, coin: Coin) -> str:
        row = self.run(self.conn.fetchrow(queries.ORDER, order))
        tx_hash = self.new_hash()
        due = row["due_usdt"] if coin == "USDT" else row["due_trx"]
        before = row["paid_usdt"]
        self.settle(tx_hash, coin, due)
        after = self.run(self.conn.fetchrow(queries.ORDER, order))
        if row["state"] in PAYABLE:
            # Its own exact amount, while it waits: it is this order's, whoever claims it.
            assert after["paid_usdt"] > before
        return tx_hash

    @rule(target=hashes, coin=st.sampled_from(["USDT", "TRX"]), amount=amounts)
    def pay_anything(self, coin: Coin, amount: Decimal) -> str:
        tx_hash = self.new_hash()
        self.settle(tx_hash, coin, amount)
        return tx_hash

    @rule(tx_hash=hashes)
    def replay(self, tx_hash: str) -> None:
        row = self.run(
            self.conn.fetchrow(
                "SELECT coin, amount FROM shop_transfers WHERE tx_hash = $1", tx_hash
            )
        )
        books = self.run(self.conn.fetch(BOOKS))
        self.settle(tx_hash, row["coin"], row["amount"])
        assert self.run(self.conn.fetch(BOOKS)) == books

    @precondition(lambda self: bool(self.run(self.conn.fetch(HELD))))
    @rule(order=orders, data=st.data())
    def owner_assigns(self, order: int, data: st.DataObject) -> None:
        held = [r["id"] for r in self.run(self.conn.fetch(HELD))]
        transfer_id = data.draw(st.sampled_from(held))

        async def go() -> None:
            async with self.conn.transaction():
                transfer = await self.conn.fetchrow(ledger.LOCK_BY_ID, transfer_id)
                row = await ledger.lock_order(self.conn, order)
                assert row is not None
                if row["state"] not in ("awaiting_payment", "partly_paid", "expired"):
                    return
                await ledger.credit(
                    self.conn, transfer, row, "owner", "owner", datetime.now(UTC), {}
                )

        self.run(go())

    @rule(order=orders)
    def expire(self, order: int) -> None:
        row = self.run(self.conn.fetchrow(queries.ORDER, order))
        if row["state"] in PAYABLE:
            self.run(self.conn.execute(EXPIRE, order))

    @invariant()
    def books_balance(self) -> None:
        books = self.run(self.conn.fetch(BOOKS))
        open_usdt: list[Decimal] = []
        open_trx: list[Decimal] = []
        for o in books:
            assert o["paid_usdt"] == o["credits"], dict(o)
            if o["state"] in PAYABLE:
                left = o["price_usdt"] - o["paid_usdt"]
                assert Decimal(0) < o["due_usdt"] - left < TAIL_CEILING, dict(o)
                open_usdt.append(o["due_usdt"])
                open_trx.append(o["due_trx"])
            if o["state"] == "paid":
                assert o["paid_usdt"] >= o["price_usdt"], dict(o)
            if o["state"] == "partly_paid":
                assert 0 < o["paid_usdt"] < o["price_usdt"], dict(o)
        assert len(set(open_usdt)) == len(open_usdt)
        assert len(set(open_trx)) == len(open_trx)
        credited = self.run(
            self.conn.fetchval(
                "SELECT count(*) FROM shop_transfers WHERE state = 'credited'"
                " AND (order_id IS NULL OR credited_usdt IS NULL)"
            )
        )
        assert credited == 0


def test_the_books_balance_whatever_happens_to_orders(db_dsn: str) -> None:
    async def prepare() -> None:
        conn = await asyncpg.connect(db_dsn)
        try:
            await conn.execute(SETUP)
        finally:
            await conn.close()

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(prepare())
    finally:
        loop.close()
    OrderLives.dsn = db_dsn
    run_state_machine_as_test(
        OrderLives,
        settings=settings(
            max_examples=examples(100, dev=15), stateful_step_count=25, deadline=None
        ),
    )
