"""A polling bot with its ad shop on, a sponsor channel the bot administers, wallets on the
simulated TronGrid, and an advertiser who talks to the bot: what the shop tests start from."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg

from sponsorbot.features.all import install
from sponsorbot.features.base import Options
from sponsorbot.features.shop.buttons import AdSubmit
from sponsorbot.features.shop.orders import Order
from sponsorbot.features.shop.products import ProductDraft
from sponsorbot.features.shop.settings import ShopConfig
from sponsorbot.web.deps import Services
from tests.kit import RunningEngine, Telegram, eventually, make_settings, running_engine, tron_urls
from tests.kit import simulated_telegram as simulated_telegram

# The watcher looks once at the start and then hourly: these tests follow a sent hash step by
# step, and a watcher crediting the transfer first would race them. WATCHING turns it on.
FAST = Options(
    config_ttl_s=0.5, shop_check_every_s=0.2, shop_watch_every_s=3600.0, campaign_check_every_s=0.2
)
WATCHING = dataclasses.replace(FAST, shop_watch_every_s=0.3)
BOT = "adshop_bot"
# An order of the bot's product of one kind ($2), written straight into the table as submitted,
# for a person ($3) with their material ($4): for tests that need many orders, not dialogues.
ORDER_ROW = """
INSERT INTO shop_orders (bot_id, product_id, kind, title, days, user_id, user_name, material,
                         price_usdt)
SELECT bot_id, id, kind, title, days, $3, 'Advertiser', $4, price_usdt
FROM shop_products WHERE bot_id = $1 AND kind = $2
RETURNING id
"""


async def add_order(
    pool: asyncpg.Pool, bot_id: int, kind: str, user: int, material: dict[str, Any]
) -> int:
    """A submitted order of the bot's `kind` product, without the dialogue: answers its id."""
    order_id: int = await pool.fetchval(ORDER_ROW, bot_id, kind, user, material)
    return order_id


def is_summary(message: dict[str, Any]) -> bool:
    """The order's summary: it has the Submit button."""
    rows = message.get("buttons") or []
    return any(b.get("callback_data") == AdSubmit().pack() for row in rows for b in row)


@dataclass
class Shop:
    """A bot with its shop, the wallets and the services."""

    tg: Telegram
    run: RunningEngine
    features: Services
    bot: dict[str, Any]
    channel: dict[str, Any]
    address: str
    payer: str
    pool: asyncpg.Pool

    async def advertiser(self, language: str = "en") -> int:
        user = await self.tg.sim.create_user("Ada", language_code=language)
        return int(user["id"])

    async def approved_banner(self, price: str | None = None) -> tuple[int, Order]:
        """An advertiser who booked the Banner, and her order as the owner approved it (with
        the simulator's TRX price set to `price` just before, when given)."""
        ada = await self.advertiser()
        order = await self.book(ada, "Banner", "Visit Ada\nhttps://ada.example")
        if price is not None:
            await self.tg.sim.set_price(price)
        return ada, await self.features.shop.approve(order["id"], "owner")

    async def own_channel(self, user: int) -> None:
        """Make the person an administrator of the shop's channel: only those who run a
        channel may book a gate slot for it."""
        await self.tg.sim.make_admin(self.channel["id"], user)

    async def messages(self, user: int) -> list[dict[str, Any]]:
        chat = await self.tg.sim.read_chat(user, BOT)
        return [m for m in chat if m["from"] == "bot" and not m["deleted"]]

    async def wait_for(
        self, user: int, check: Callable[[dict[str, Any]], bool], timeout: float = 20.0
    ) -> dict[str, Any]:
        """Wait for a bot message to this person that passes `check`; return the last one."""
        found: list[dict[str, Any]] = []

        async def ok() -> bool:
            found[:] = [m for m in await self.messages(user) if check(m)]
            return bool(found)

        await eventually(ok, timeout=timeout)
        return found[-1]

    async def say(self, user: int, text: str) -> None:
        await self.tg.sim.send_text(user, BOT, text)

    async def press(self, user: int, message: dict[str, Any], label_part: str) -> None:
        """Press the button of `message` whose label holds `label_part`."""
        for row in message.get("buttons") or []:
            for button in row:
                if label_part in button["text"] and button.get("callback_data"):
                    await self.tg.sim.press_button(
                        user, BOT, message["message_id"], button["callback_data"]
                    )
                    return
        raise AssertionError(f"no button {label_part!r} in {message.get('buttons')}")

    async def order_of(self, user: int) -> Order:
        """The advertiser's latest order, once there is one."""
        found: list[int] = []

        async def made() -> bool:
            row = await self.pool.fetchval(
                "SELECT max(id) FROM shop_orders WHERE user_id = $1", user
            )
            found[:] = [row] if row is not None else []
            return bool(found)

        await eventually(made)
        return await self.features.shop.order(found[0])

    async def state_of(self, order_id: int, state: str, timeout: float = 20.0) -> Order:
        """Wait until the order is in `state`."""

        async def there() -> bool:
            return bool((await self.features.shop.order(order_id))["state"] == state)

        await eventually(there, timeout=timeout, every=0.1)
        return await self.features.shop.order(order_id)

    async def offer(
        self,
        user: int,
        product_title: str,
        material: str,
        check: Callable[[dict[str, Any]], bool] = lambda _: True,
    ) -> dict[str, Any]:
        """/advertise, the product and the material: the bot's answer that passes `check` (the
        summary, or why the material cannot be used)."""
        # Each step waits for a message after the last, or an earlier menu would be pressed.
        before = len(await self.messages(user))
        await self.say(user, "/advertise")
        menu = await self.next_message(
            user, before, lambda m: product_title in (m.get("text") or "")
        )
        before = len(await self.messages(user))
        await self.press(user, menu, product_title)
        await self.next_message(user, before)
        before = len(await self.messages(user))
        await self.say(user, material)
        return await self.next_message(user, before, check)

    async def book(self, user: int, product_title: str, material: str) -> Order:
        """The whole dialogue: /advertise, the product, the material, submit."""
        summary = await self.offer(user, product_title, material, is_summary)
        before = len(await self.messages(user))
        await self.press(user, summary, "✅")
        await self.next_message(user, before)
        return await self.order_of(user)

    async def next_message(
        self,
        user: int,
        before: int,
        check: Callable[[dict[str, Any]], bool] = lambda _: True,
    ) -> dict[str, Any]:
        """Wait for a bot message after the first `before` that passes `check`."""
        found: list[dict[str, Any]] = []

        async def more() -> bool:
            found[:] = [m for m in (await self.messages(user))[before:] if check(m)]
            return bool(found)

        await eventually(more)
        return found[-1]


@contextlib.asynccontextmanager
async def shop(
    pool: asyncpg.Pool,
    db_dsn: str,
    tmp_path: Path,
    *,
    accept_trx: bool = True,
    options: Options = FAST,
    **settings: Any,
) -> AsyncIterator[Shop]:
    """A polling bot with its shop on (mainnet), a 10 USDT gate slot for 3 joins and a
    5 USDT banner, a sponsor channel the bot administers, and two funded wallets."""
    async with simulated_telegram() as tg:
        sim_bot = await tg.sim.create_bot(BOT)
        owner = await tg.sim.create_user("Sponsor")
        channel = await tg.sim.create_channel(
            "Ada's channel", username="adachannel", owner_id=owner["id"]
        )
        await tg.sim.make_admin(channel["id"], sim_bot["id"])
        shop_wallet = await tg.sim.tron_create_wallet()
        payer = await tg.sim.tron_create_wallet()
        values = {**tron_urls(tg.url), **settings}
        async with running_engine(
            make_settings(db_dsn, tg.url, tmp_path, **values), pool, db_dsn
        ) as run:
            features = Services.of(install(run.engine, options=options))
            bot = await run.engine.bots.add(sim_bot["token"], "polling")
            await features.shop.save_settings(
                bot["id"],
                ShopConfig(enabled=True, address=shop_wallet["address"], accept_trx=accept_trx),
            )
            await features.shop.create_product(
                bot["id"], ProductDraft("gate_slot", "Gate slot", "10", joins=3)
            )
            await features.shop.create_product(
                bot["id"], ProductDraft("banner", "Banner", "5", days=7)
            )
            yield Shop(
                tg, run, features, bot, channel, shop_wallet["address"], payer["address"], pool
            )
