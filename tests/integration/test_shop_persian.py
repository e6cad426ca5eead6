"""The shop to a Persian advertiser, end to end on the simulated Telegram: the products under
their Persian titles (the English ones where none is given), the order named as it was read, and
a payment request whose amount, deadline and commands keep their order in right-to-left text,
with the deadline in the workspace's zone and the Jalali calendar."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import asyncpg

from sponsorbot.features.calendar import jalali_text, persian_number
from sponsorbot.features.shop.products import ProductDraft
from tests.integration.panel_kit import client
from tests.integration.shopkit import shop
from tests.integration.test_panel_shop import errors_of, panel_env, signed_in
from tests.integration.test_shop import text_has

LRI, FSI, PDI = "\u2066", "\u2068", "\u2069"


async def test_a_persian_advertiser_books_under_the_persian_title_and_reads_a_jalali_deadline(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path) as s:
        await pool.execute("UPDATE workspace SET time_zone = 'Asia/Tehran' WHERE id = 1")
        bot_id = s.bot["id"]
        slot = next(p for p in await s.features.shop.products(bot_id) if p["kind"] == "gate_slot")
        await s.features.shop.change_product(
            bot_id,
            slot["id"],
            ProductDraft(
                "gate_slot",
                "Gate slot",
                "10",
                joins=3,
                title_fa="جایگاه دروازه",
                description_fa="کانال شما در دروازه",
            ),
        )
        stored = await s.features.shop.product(bot_id, slot["id"])
        assert stored["title_fa"] == "جایگاه دروازه" and stored["title"] == "Gate slot"

        # An English advertiser still reads the English title.
        ada = await s.advertiser()
        before = len(await s.messages(ada))
        await s.say(ada, "/advertise")
        menu = await s.next_message(ada, before, text_has("Gate slot"))
        assert "جایگاه" not in menu["text"]

        # A Persian one reads the Persian title, and the banner (no Persian title) in English.
        bob = await s.advertiser("fa")
        await s.own_channel(bob)
        before = len(await s.messages(bob))
        await s.say(bob, "/advertise")
        menu = await s.next_message(bob, before, text_has("جایگاه دروازه"))
        assert f"{LRI}10 USDT{PDI}" in menu["text"] and "کانال شما در دروازه" in menu["text"]
        assert "Banner" in menu["text"]
        labels = [b["text"] for row in menu["buttons"] for b in row]
        assert any("جایگاه دروازه" in label for label in labels)

        order = await s.book(bob, "جایگاه دروازه", "@adachannel")
        assert order["title"] == "جایگاه دروازه"  # as the advertiser read it

        approved = await s.features.shop.approve(order["id"], "owner")
        request = await s.wait_for(bob, text_has("ترون"))
        text = request["text"]
        deadline = approved["expires_at"]
        local = datetime.fromisoformat(str(deadline)).astimezone(ZoneInfo("Asia/Tehran"))
        shown = persian_number(f"{jalali_text(local.date())} {local:%H:%M}")
        assert f"{LRI}{shown} (Asia/Tehran){PDI}" in text
        assert "(UTC)" not in text and "mainnet" not in text and "شبکهٔ اصلی" in text
        assert f"{LRI}/orders{PDI}" in text
        # The amount with its unit and network is one left-to-right run.
        assert re.search(f"{LRI}[0-9.]+ USDT \\(TRC-20\\){PDI}", text), text


async def test_the_product_form_keeps_a_persian_title_and_description_beside_the_english(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with panel_env(pool, db_dsn, tmp_path) as env, client(env.app) as http:
        csrf = await signed_in(env, http)
        base = f"/bots/{env.bot['id']}/shop/products"
        form = {"csrf": csrf, "kind": "banner", "title": "Banner", "price_usdt": "5"}
        persian = {"title_fa": "بنر", "description_fa": "زیر هر محتوا", "days": "7"}
        too_long = await http.post(base, data={**form, **persian, "title_fa": "ب" * 101})
        assert too_long.status_code == 400 and "title_fa" in errors_of(too_long)
        assert 'value="Banner"' in too_long.text  # what was typed stays

        made = await http.post(base, data={**form, **persian, "active": "on"})
        assert made.status_code == 303
        product = (await env.features.shop.products(env.bot["id"]))[0]
        assert (product["title_fa"], product["description_fa"]) == ("بنر", "زیر هر محتوا")
        listed = await http.get(base)
        assert "بنر" in listed.text and "زیر هر محتوا" in listed.text
        edit = await http.get(f"{base}/{product['id']}/edit")
        assert 'value="بنر"' in edit.text and "زیر هر محتوا</textarea>" in edit.text

        cleared = await http.post(
            f"{base}/{product['id']}/edit", data={**form, "days": "7", "active": "on"}
        )
        assert cleared.status_code == 303
        product = await env.features.shop.product(env.bot["id"], product["id"])
        assert product["title_fa"] == "" and product["title"] == "Banner"
