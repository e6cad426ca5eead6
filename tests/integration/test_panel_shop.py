"""The ad shop in the panel over HTTP, with the engine running on the simulator (Telegram, its
TronGrid and the price sources): the settings with their errors beside the fields and the
TronGrid key shown only by its last 4, products, orders made in the database listed and shown,
reject / approve / hashes / mark paid with the advertiser's messages and the audit log, price
sources down, roles, and the Persian page. Where the money goes is the owner's, confirmed with a
password or code, announced on the dashboard; test networks need their setting; a TronGrid key
that can no longer be decrypted is said, not a 500, and can be replaced."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pyotp
import pytest
from fastapi import FastAPI

from sponsorbot.db.database import Database
from sponsorbot.engine.token_box import TokenBox
from sponsorbot.features.accounts.api_tokens import TokenService
from sponsorbot.features.accounts.users import LockoutPolicy
from sponsorbot.features.all import install
from sponsorbot.features.base import Options
from sponsorbot.features.errors import Invalid
from sponsorbot.features.shop.settings import ShopConfig
from sponsorbot.web.app import create_app
from sponsorbot.web.deps import Services
from sponsorbot.web.panel import PanelConfig
from tests.integration.panel_kit import PASSWORD, add_member, client, csrf_of, sign_in
from tests.kit import (
    Telegram,
    eventually,
    make_settings,
    running_engine,
    simulated_telegram,
    tron_urls,
)

BOT = "shop_panel_bot"
FAST = Options(config_ttl_s=0.5, shop_check_every_s=0.2)
POST = {
    "text": "<b>Spring sale</b>\nEverything half price",
    "media_kind": None,
    "file_id": None,
    "buttons": [[{"text": "Open the shop", "url": "https://example.com/shop"}]],
    "protect": False,
    "silent": False,
    "paid": False,
}
KEY = "f3a1c9d2-77aa-4e0b-9d1e-5c2b7a6e9876"


@dataclass
class Env:
    """The panel app over a running engine: one bot, its advertiser, two funded wallets."""

    app: FastAPI
    features: Services
    tg: Telegram
    bot: dict[str, Any]
    advertiser: int
    shop_wallet: str
    payer: str
    pool: asyncpg.Pool

    async def order(self, kind: str = "broadcast", price: str = "10", **columns: Any) -> int:
        """An order as the advertiser's dialogue leaves it, written straight to the database."""
        material = {
            "broadcast": {"post": POST},
            "gate_slot": {"chat_id": -1001234567890, "title": "Ada's news", "username": "adanews"},
            "banner": {"text": "Fresh bread every morning", "url": "https://example.com/bread"},
        }[kind]
        order_id: int = await self.pool.fetchval(
            "INSERT INTO shop_orders (bot_id, kind, title, joins, days, user_id, user_name,"
            " language, material, price_usdt)"
            " VALUES ($1, $2, $3, $4, $5, $6, 'Ada', $7, $8, $9) RETURNING id",
            self.bot["id"],
            kind,
            columns.get("title", f"A {kind.replace('_', ' ')}"),
            100 if kind == "gate_slot" else None,
            7 if kind == "banner" else None,
            self.advertiser,
            columns.get("language", "en"),
            material,
            price,
        )
        await self.pool.execute(
            "INSERT INTO shop_order_log (bot_id, order_id, kind, actor)"
            " SELECT bot_id, id, 'submitted', $2 FROM shop_orders WHERE id = $1",
            order_id,
            f"tg:{self.advertiser}",
        )
        return order_id

    async def chat(self) -> list[str]:
        """What the bot has said to the advertiser."""
        messages = await self.tg.sim.read_chat(self.advertiser, BOT)
        return [str(m.get("text") or m.get("caption") or "") for m in messages]


@contextlib.asynccontextmanager
async def panel_env(
    pool: asyncpg.Pool, dsn: str, tmp_path: Path, **settings: Any
) -> AsyncIterator[Env]:
    async with simulated_telegram() as tg:
        sim_bot = await tg.sim.create_bot(BOT)
        urls = tron_urls(tg.url)
        config = make_settings(dsn, tg.url, tmp_path, **urls, **settings)
        async with running_engine(config, pool, dsn) as run:
            features = install(run.engine, options=FAST)
            panel = PanelConfig(lockout=LockoutPolicy(delay_step_s=0.0, max_delay_s=0.0))
            app = create_app(config, Database(dsn, pool, None), features, panel)
            bot = await run.engine.bots.add(sim_bot["token"], "polling")
            (advertiser,) = await tg.sim.create_users(1, language_code="en", started=BOT)
            shop_wallet = (await tg.sim.tron_create_wallet())["address"]
            payer = (await tg.sim.tron_create_wallet())["address"]
            yield Env(
                app, Services.of(features), tg, bot, int(advertiser), shop_wallet, payer, pool
            )


async def signed_in(env: Env, http: httpx.AsyncClient, role: str = "owner") -> str:
    await sign_in(http, await add_member(env.pool, role))
    return await csrf_of(http, "/account")


async def open_shop(env: Env, accept_trx: bool = True) -> None:
    config = ShopConfig(enabled=True, address=env.shop_wallet, accept_trx=accept_trx)
    await env.features.shop.save_settings(env.bot["id"], config)


def settings_form(env: Env, **fields: str) -> dict[str, str]:
    values = {
        "enabled": "on",
        "network": "mainnet",
        "address": env.shop_wallet,
        "accept_usdt": "on",
        "accept_trx": "on",
        "api_key": "",
        "pay_within_h": "24",
        "confirm": PASSWORD,  # only asked for when the address, network or coins change
    }
    values.update(fields)
    return {k: v for k, v in values.items() if v is not None}


def mistyped(address: str) -> str:
    """The address with one character changed to another Base58 one: only its checksum tells."""
    i = 10
    return address[:i] + ("2" if address[i] != "2" else "3") + address[i + 1 :]


async def audit_kinds(pool: asyncpg.Pool, prefix: str = "shop.") -> list[str]:
    rows = await pool.fetch(
        "SELECT kind FROM audit_log WHERE kind LIKE $1 ORDER BY id", prefix + "%"
    )
    return [r["kind"] for r in rows]


def errors_of(page: httpx.Response) -> dict[str, str]:
    """Each field's error on a page, by the field's name."""
    return dict(re.findall(r'<p class="error" id="e-([\w-]+)">([^<]*)</p>', page.text))


async def test_settings_errors_beside_their_fields_and_the_key_shown_by_its_tail(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with panel_env(pool, db_dsn, tmp_path) as env, client(env.app) as http:
        csrf = await signed_in(env, http)
        base = f"/bots/{env.bot['id']}/shop"
        first = await http.get(base)
        assert first.status_code == 200 and "Not set: TronGrid answers fewer" in first.text
        assert f'href="{base}"' in first.text and 'aria-current="page">Shop<' in first.text

        cases = [
            ({"address": mistyped(env.shop_wallet)}, "address", "checksum does not match"),
            ({"address": "T0000"}, "address", "a character no address has"),
            ({"address": "TR7NHqjeKQ"}, "address", "one has 34 characters and starts with T"),
            ({"address": ""}, "address", "needs its TRON address before it can be turned on"),
            ({"accept_usdt": "", "accept_trx": ""}, "coins", "Accept USDT, TRX or both."),
            ({"pay_within_h": "soon"}, "pay_within_h", "1 to 720 hours"),
            ({"pay_within_h": "721"}, "pay_within_h", "1 to 720 hours"),
            ({"network": "testnet"}, "network", "Choose mainnet, Nile or Shasta."),
            ({"api_key": "two words"}, "api_key", "not well-formed"),
        ]
        for fields, field, text in cases:
            answer = await http.post(base, data={"csrf": csrf, **settings_form(env, **fields)})
            assert answer.status_code == 400, (fields, answer.status_code)
            assert text in errors_of(answer).get(field, ""), (fields, errors_of(answer))
            assert 'role="alert"' in answer.text
            if fields.get("address"):
                assert f'value="{fields["address"]}"' in answer.text  # what was typed stays
            assert "two words" not in answer.text  # a typed key never comes back
        assert await pool.fetchval("SELECT count(*) FROM shop_settings") == 0

        saved = await http.post(base, data={"csrf": csrf, **settings_form(env, api_key=KEY)})
        assert saved.status_code == 303 and saved.headers["location"] == f"{base}?saved=1"
        page = await http.get(f"{base}?saved=1")
        assert "Saved." in page.text and "Set, ends in …9876" in page.text
        assert KEY not in page.text and 'name="remove_api_key"' in page.text
        assert f'value="{env.shop_wallet}"' in page.text
        stored = await env.features.shop.settings(env.bot["id"])
        assert stored["enabled"] and stored["api_key_tail"] == "9876"
        sealed = bytes(await pool.fetchval("SELECT api_key FROM shop_settings"))
        assert KEY.encode() not in sealed

        kept = await http.post(base, data={"csrf": csrf, **settings_form(env, pay_within_h="48")})
        assert kept.status_code == 303
        assert (await env.features.shop.settings(env.bot["id"]))["api_key_tail"] == "9876"
        removed = await http.post(
            base,
            data={
                "csrf": csrf,
                **settings_form(env, remove_api_key="on", api_key="x1", pay_within_h="48"),
            },
        )
        assert removed.status_code == 303
        assert (await env.features.shop.settings(env.bot["id"]))["api_key_tail"] is None
        assert "Not set: TronGrid" in (await http.get(base)).text
    changes = await pool.fetch(
        "SELECT target, before, after FROM audit_log WHERE kind = 'shop.settings_changed'"
        " ORDER BY id"
    )
    assert [c["after"] for c in changes] == [
        {
            "enabled": True,
            "address": env.shop_wallet,
            "trongrid_key": "set",
        },
        {"pay_within_h": 48},
        {"trongrid_key": None},
    ]
    assert changes[0]["target"] == f"@{BOT}"
    everything = await pool.fetchval(
        "SELECT string_agg(before::text || after::text, ' ') FROM audit_log"
    )
    assert KEY not in everything and "9876" not in everything


async def test_products_are_added_changed_and_deleted_with_clear_errors(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with panel_env(pool, db_dsn, tmp_path) as env, client(env.app) as http:
        csrf = await signed_in(env, http)
        base = f"/bots/{env.bot['id']}/shop/products"
        empty = await http.get(base)
        assert "No products yet" in empty.text and f'href="{base}/new"' in empty.text
        assert "The shop of this bot is closed" in empty.text
        assert 'name="kind"' in (await http.get(f"{base}/new")).text

        good = {"kind": "gate_slot", "title": "Gate slot", "price_usdt": "12.5", "joins": "1000"}
        cases = [
            ({"price_usdt": "0"}, "price_usdt", "The price must be more than 0."),
            ({"price_usdt": "ten"}, "price_usdt", "The price is not a number."),
            ({"price_usdt": "1.1234567"}, "price_usdt", "6 decimal places at most"),
            ({"joins": ""}, "joins", "1 to 10,000,000 joins"),
            ({"joins": "many"}, "joins", "1 to 10,000,000 joins"),
            ({"kind": "banner", "days": "400"}, "days", "1 to 365 days"),
            ({"title": "  "}, "title", "The title is 1 to 100 characters."),
            ({"kind": "poster"}, "kind", "Choose what the product is."),
        ]
        for fields, field, text in cases:
            form = {"csrf": csrf, **good, "active": "on", **fields}
            answer = await http.post(base, data=form)
            assert answer.status_code == 400, (fields, answer.status_code)
            assert text in errors_of(answer).get(field, ""), (fields, errors_of(answer))
            assert 'value="Gate slot"' in answer.text or "title" in fields
        assert await pool.fetchval("SELECT count(*) FROM shop_products") == 0

        made = await http.post(base, data={"csrf": csrf, **good, "active": "on"})
        assert made.status_code == 303 and made.headers["location"] == base
        banner = {"kind": "banner", "title": "Banner", "price_usdt": "5", "days": "7"}
        assert (await http.post(base, data={"csrf": csrf, **banner})).status_code == 303
        listed = await http.get(base)
        assert "12.5 USDT" in listed.text and "1,000 joins" in listed.text
        assert "7 days" in listed.text and "Withdrawn" in listed.text and "On sale" in listed.text
        (product_id, banner_id) = [
            r["id"] for r in await pool.fetch("SELECT id FROM shop_products ORDER BY id")
        ]
        edit = await http.get(f"{base}/{product_id}/edit")
        assert 'value="12.5"' in edit.text and 'value="1000"' in edit.text
        bad = await http.post(
            f"{base}/{product_id}/edit", data={"csrf": csrf, **good, "price_usdt": "0"}
        )
        assert bad.status_code == 400 and "The price must be more than 0." in bad.text
        changed = await http.post(
            f"{base}/{product_id}/edit",
            data={"csrf": csrf, **good, "price_usdt": "15", "active": "on"},
        )
        assert changed.status_code == 303
        product = await env.features.shop.product(env.bot["id"], product_id)
        assert product["price_usdt"] == "15" and product["active"] is True
        gone = await http.post(f"{base}/{banner_id}/delete", data={"csrf": csrf})
        assert gone.status_code == 303
        assert (
            await http.post(f"{base}/{banner_id}/delete", data={"csrf": csrf})
        ).status_code == 404
        assert (await http.get(f"{base}/999999/edit")).status_code == 404
        assert "Banner" not in (await http.get(base)).text
    assert await audit_kinds(pool) == [
        "shop.product_created",
        "shop.product_created",
        "shop.product_changed",
        "shop.product_deleted",
    ]
    change = await pool.fetchrow(
        "SELECT before, after FROM audit_log WHERE kind = 'shop.product_changed'"
    )
    assert change["before"] == {"price_usdt": "12.5"} and change["after"] == {"price_usdt": "15"}


async def test_an_order_made_in_the_database_is_listed_shown_and_rejected(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with panel_env(pool, db_dsn, tmp_path) as env, client(env.app) as http:
        csrf = await signed_in(env, http)
        order_id = await env.order("broadcast", price="25", title="Post to the audience")
        listed = await http.get("/shop/orders")
        assert listed.status_code == 200
        assert f'href="/shop/orders/{order_id}"' in listed.text and f"@{BOT}" in listed.text
        assert "Post to the audience" in listed.text and "25 USDT" in listed.text
        assert re.search(
            r'data-state="submitted"[^>]*>Submitted <span class="badge paused">1<', listed.text
        )
        none = await http.get("/shop/orders", params={"state": "rejected", "bot": env.bot["id"]})
        assert "No order matches these filters." in none.text

        base = f"/shop/orders/{order_id}"
        page = await http.get(base)
        assert page.status_code == 200
        assert re.search(
            r'id="material-body" dir="auto">Spring sale<br>Everything half price<', page.text
        )
        assert 'href="https://example.com/shop"' in page.text and "Open the shop" in page.text
        for action in ("approve", "reject", "ask-change", "cancel"):
            assert f'action="{base}/{action}"' in page.text, action
        for action in ("mark-paid", "mark-refunded", "hash"):
            assert f'action="{base}/{action}"' not in page.text, action
        assert "Submitted" in page.text and "The advertiser" in page.text

        empty = await http.post(f"{base}/reject", data={"csrf": csrf, "reason": "  "})
        assert empty.status_code == 400 and 'id="refusal"' in empty.text
        assert "Write the advertiser a reason, up to 500 characters." in empty.text
        assert (await env.features.shop.order(order_id))["state"] == "submitted"

        why = "Not for this audience, sorry"
        rejected = await http.post(f"{base}/reject", data={"csrf": csrf, "reason": why})
        assert rejected.status_code == 303
        assert rejected.headers["location"] == f"{base}?done=reject"
        assert "the advertiser was told why" in (await http.get(f"{base}?done=reject")).text
        assert (await env.features.shop.order(order_id))["state"] == "rejected"

        async def told() -> bool:
            return any(why in text and f"#{order_id}" in text for text in await env.chat())

        await eventually(told)
        after = await http.get(base)
        assert f"Rejected: {why}" in after.text and 'action="' + base not in after.text
        await open_shop(env)
        late = await http.post(f"{base}/approve", data={"csrf": csrf})
        assert late.status_code == 409
        assert "The order is “Rejected” now: “Approve” cannot be done." in late.text
        assert (await http.get("/shop/orders/999999")).status_code == 404
        # Another order: a change is asked for, then the owner cancels it.
        other = await env.order("banner", price="5")
        change = "Please shorten the text"
        asked = await http.post(
            f"/shop/orders/{other}/ask-change", data={"csrf": csrf, "reason": change}
        )
        assert asked.status_code == 303
        assert (await env.features.shop.order(other))["state"] == "in_review"

        async def asked_told() -> bool:
            return any(change in text for text in await env.chat())

        await eventually(asked_told)
        page = await http.get(f"/shop/orders/{other}")
        assert f"Change asked: {change}" in page.text and "Change asked" in page.text
        assert f'action="/shop/orders/{other}/approve"' not in page.text
        cancelled = await http.post(f"/shop/orders/{other}/cancel", data={"csrf": csrf})
        assert cancelled.status_code == 303
        assert (await env.features.shop.order(other))["state"] == "cancelled"
        both = await http.get("/shop/orders")
        assert re.search(r'data-state="cancelled"[^>]*>Cancelled <span class="badge">1<', both.text)
    entry = await pool.fetchrow("SELECT * FROM audit_log WHERE kind = 'shop.order_rejected'")
    assert entry["target"] == f"order:{order_id}"
    assert entry["before"] == {"state": "submitted"}
    assert entry["after"] == {"state": "rejected", "reason": why}
    assert await audit_kinds(pool) == [
        "shop.order_rejected",
        "shop.order_change_asked",
        "shop.order_cancelled",
    ]


async def test_approve_hashes_verdicts_and_mark_paid_on_the_order_page(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with panel_env(pool, db_dsn, tmp_path) as env, client(env.app) as http:
        csrf = await signed_in(env, http)
        order_id = await env.order("gate_slot", price="10")
        base = f"/shop/orders/{order_id}"
        no_address = await http.post(f"{base}/approve", data={"csrf": csrf})
        assert (
            no_address.status_code == 409
            and "Set the shop&#39;s TRON address first" in no_address.text
        )

        await open_shop(env)
        await env.tg.sim.price_down(mode="500")
        down = await http.post(f"{base}/approve", data={"csrf": csrf})
        assert down.status_code == 409
        assert "No TRX price is available right now" in down.text
        assert (await env.features.shop.order(order_id))["state"] == "submitted"
        await env.tg.sim.price_up()

        approved = await http.post(f"{base}/approve", data={"csrf": csrf})
        assert approved.status_code == 303, approved.text[-2000:]
        page = await http.get(base)
        assert "Awaiting payment" in page.text and env.shop_wallet in page.text
        assert re.search(r"USDT per TRX, from \w+", page.text)
        assert "Approved: the payment request was sent" in page.text
        assert "TRX rate locked:" in page.text
        assert f'action="{base}/hash"' in page.text and f'action="{base}/approve"' not in page.text

        async def asked() -> bool:
            return any(env.shop_wallet in text for text in await env.chat())

        await eventually(asked)

        elsewhere = (await env.tg.sim.tron_create_wallet())["address"]
        stray = await env.tg.sim.tron_usdt(env.payer, elsewhere, "10", solidify="now")
        part = await env.tg.sim.tron_usdt(env.payer, env.shop_wallet, "4", solidify="now")
        garbage = await http.post(f"{base}/hash", data={"csrf": csrf, "hash": "not-a-hash"})
        assert garbage.status_code == 400 and 'id="e-hash"' in garbage.text
        assert (
            "This is not a transaction hash" in garbage.text
            and 'value="not-a-hash"' in garbage.text
        )
        link = f"https://tronscan.org/#/transaction/{stray['hash']}"
        for text in (link, part["hash"].upper()):
            added = await http.post(f"{base}/hash", data={"csrf": csrf, "hash": text})
            assert added.status_code == 303, added.text[-2000:]
        twice = await http.post(f"{base}/hash", data={"csrf": csrf, "hash": part["hash"]})
        assert twice.status_code == 409 and "already being checked" in twice.text

        async def decided() -> bool:
            payments = (await env.features.shop.order(order_id))["payments"]
            return all(p["status"] != "checking" for p in payments)

        await eventually(decided)
        # The part payment is not the order's exact amount: it is held for the owner, listed
        # on the Transfers page, and assigned from there.
        page = await http.get(base)
        assert "Held for the owner" in page.text and "Awaiting payment" in page.text
        listed = await http.get("/shop/transfers")
        assert part["hash"][:10] in listed.text and "Waiting for you" in listed.text
        dashboard = await http.get("/")
        assert "The shop needs you" in dashboard.text
        assert "1 transfer waits for you to assign it or send it back" in dashboard.text
        (waiting,) = (await env.features.shop.transfers("unattributed"))["items"]
        typo = await http.post(
            f"/shop/transfers/{waiting['id']}/assign", data={"csrf": csrf, "order_id": "x"}
        )
        assert typo.status_code == 400 and "Type the number of the order" in typo.text
        assigned = await http.post(
            f"/shop/transfers/{waiting['id']}/assign",
            data={"csrf": csrf, "order_id": str(order_id)},
        )
        assert assigned.status_code == 303 and assigned.headers["location"] == base
        again = await http.post(
            f"/shop/transfers/{waiting['id']}/assign",
            data={"csrf": csrf, "order_id": str(order_id)},
        )
        assert again.status_code == 409 and "not waiting" in again.text
        page = await http.get(base)
        assert "Partly paid" in page.text
        assert re.search(r'id="paid"><bdi class="nowrap">4 USDT', page.text)
        assert re.search(r'id="left"><bdi class="nowrap">6 USDT', page.text)
        assert (
            f"The coins went to {elsewhere}, not to the shop&#39;s address {env.shop_wallet}."
            in page.text
        )
        assert f'href="https://tronscan.org/#/transaction/{part["hash"]}"' in page.text
        assert "Payment counted: 4 USDT, credited as 4 USDT" in page.text
        assert "Payment refused" in page.text and "The rest is due by" in page.text

        payments = await http.get("/shop/payments")
        assert stray["hash"][:10] in payments.text and part["hash"][:10] in payments.text
        refused = await http.get("/shop/payments", params={"status": "rejected"})
        assert stray["hash"][:10] in refused.text and part["hash"][:10] not in refused.text
        assert f'href="/shop/orders/{order_id}"' in refused.text

        no_reason = await http.post(f"{base}/mark-paid", data={"csrf": csrf, "reason": ""})
        assert no_reason.status_code == 400 and 'id="e-mark-paid"' in no_reason.text
        paid = await http.post(
            f"{base}/mark-paid", data={"csrf": csrf, "reason": "The rest came by bank transfer"}
        )
        assert paid.status_code == 303
        page = await http.get(base)
        assert "Marked paid: The rest came by bank transfer" in page.text
        assert (await env.features.shop.order(order_id))["state"] in ("paid", "running")
        refunded = await http.post(f"{base}/mark-refunded", data={"csrf": csrf, "reason": ""})
        assert refunded.status_code == 303
        page = await http.get(base)
        assert "Refunded" in page.text and "Marked refunded" in page.text
        assert 'id="actions"' not in page.text  # nothing more can be done

        async def refund_told() -> bool:
            return any("refunded" in text for text in await env.chat())

        await eventually(refund_told)
    assert await audit_kinds(pool) == [
        "shop.order_approved",
        "shop.order_hash_added",
        "shop.order_hash_added",
        "shop.transfer_assigned",
        "shop.order_marked_paid",
        "shop.order_refunded",
    ]
    hashes = await pool.fetch(
        "SELECT after->>'hash' AS h FROM audit_log WHERE kind = 'shop.order_hash_added' ORDER BY id"
    )
    assert [r["h"] for r in hashes] == [stray["hash"], part["hash"].lower()]


async def test_an_analyst_reads_but_cannot_act(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with panel_env(pool, db_dsn, tmp_path) as env, client(env.app) as http:
        await open_shop(env)
        order_id = await env.order("banner")
        csrf = await signed_in(env, http, "analyst")
        bot_id = env.bot["id"]
        for path in (
            f"/bots/{bot_id}/shop",
            f"/bots/{bot_id}/shop/products",
            "/shop/orders",
            f"/shop/orders/{order_id}",
            "/shop/payments",
        ):
            page = await http.get(path)
            assert page.status_code == 200, path
            assert '<button class="primary">' not in page.text, path
        order = await http.get(f"/shop/orders/{order_id}")
        assert "Fresh bread every morning" in order.text and 'id="actions"' not in order.text
        settings = await http.get(f"/bots/{bot_id}/shop")
        assert re.search(r'<input id="f-address" name="address"[^>]* disabled>', settings.text)
        assert "Save the shop settings" not in settings.text
        for action in (
            "approve",
            "reject",
            "ask-change",
            "cancel",
            "mark-paid",
            "mark-refunded",
            "hash",
        ):
            answer = await http.post(
                f"/shop/orders/{order_id}/{action}", data={"csrf": csrf, "reason": "x"}
            )
            assert answer.status_code == 403, action
        assert (await http.post(f"/bots/{bot_id}/shop", data={"csrf": csrf})).status_code == 403
        made = await http.post(
            f"/bots/{bot_id}/shop/products", data={"csrf": csrf, "kind": "banner"}
        )
        assert made.status_code == 403
        assert (await http.get(f"/bots/{bot_id}/shop/products/new")).status_code == 403
    assert (await env.features.shop.order(order_id))["state"] == "submitted"
    assert await audit_kinds(pool) == []


async def test_the_order_page_in_persian(pool: asyncpg.Pool, db_dsn: str, tmp_path: Path) -> None:
    async with panel_env(pool, db_dsn, tmp_path) as env, client(env.app) as http:
        await open_shop(env)
        order_id = await env.order("gate_slot", price="1250.5")
        csrf = await signed_in(env, http)
        switched = await http.post(
            "/language", data={"csrf": csrf, "language": "fa", "next": f"/shop/orders/{order_id}"}
        )
        assert switched.status_code == 303
        page = await http.get(f"/shop/orders/{order_id}")
        assert page.status_code == 200
        assert '<html lang="fa" dir="rtl">' in page.text
        assert f"سفارش #{''.join('۰۱۲۳۴۵۶۷۸۹'[int(d)] for d in str(order_id))}" in page.text
        assert "۱۲۵۰٫۵ USDT" in page.text and "ثبت‌شده" in page.text
        assert re.search(r"[۰-۹]{4}/[۰-۹]{2}/[۰-۹]{2} [۰-۹]{2}:[۰-۹]{2}", page.text)  # Jalali
        assert "@adanews" in page.text  # a username keeps its Latin letters and digits
        listed = await http.get("/shop/orders")
        assert "سفارش‌ها" in listed.text
        for path in (
            "/shop/payments",
            f"/bots/{env.bot['id']}/shop",
            f"/bots/{env.bot['id']}/shop/products",
        ):
            assert (await http.get(path)).status_code == 200, path


def as_a_browser_sends(page: httpx.Response) -> dict[str, str]:
    """The settings form as a browser would send it unchanged: enabled fields and hidden ones
    (a disabled field is not sent)."""
    sent: dict[str, str] = {}
    for tag in re.findall(r"<input [^>]*>", page.text):
        name = re.search(r'name="([^"]+)"', tag)
        if name is None or " disabled" in tag:
            continue
        if 'type="checkbox"' in tag and "checked" not in tag:
            continue
        value = re.search(r'value="([^"]*)"', tag)
        sent[name[1]] = value[1] if value else ""
    selected = re.search(
        r'<select id="f-network" name="network"(?![^>]* disabled)[^>]*>.*?'
        r'<option value="(\w+)" selected',
        page.text,
        re.DOTALL,
    )
    if selected:
        sent["network"] = selected[1]
    return sent


async def test_where_the_money_goes_is_the_owners_with_a_password_and_the_dashboard_says_so(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """M3: an admin saves the other settings but not the address, network or coins; the owner
    changes them with their password or a current code; each change is audited by the
    address's tail and listed on the dashboard for a week."""
    async with panel_env(pool, db_dsn, tmp_path) as env:
        await open_shop(env)
        base = f"/bots/{env.bot['id']}/shop"
        other = (await env.tg.sim.tron_create_wallet())["address"]
        async with client(env.app) as admin:
            await signed_in(env, admin, "admin")
            page = await admin.get(base)
            assert 'id="owner-only"' in page.text and 'name="confirm"' not in page.text
            assert re.search(r'<input id="f-address" name="address"[^>]* disabled>', page.text)
            form = as_a_browser_sends(page)
            assert form["address"] == env.shop_wallet and form["network"] == "mainnet"
            saved = await admin.post(base, data={**form, "pay_within_h": "48"})
            assert saved.status_code == 303, errors_of(saved)
            assert (await env.features.shop.settings(env.bot["id"]))["pay_within_h"] == 48
            for change in ({"address": other}, {"accept_trx": ""}, {"network": "nile"}):
                refused = await admin.post(base, data={**form, **change})
                assert refused.status_code == 403, change
                assert "Only the owner can change the shop&#39;s address" in refused.text
            dashboard = await admin.get("/")
            assert 'id="money-changes"' not in dashboard.text
        stored = await env.features.shop.settings(env.bot["id"])
        assert stored["address"] == env.shop_wallet and stored["accept_trx"] is True

        async with client(env.app) as owner:
            csrf = await signed_in(env, owner)
            assert 'name="confirm"' in (await owner.get(base)).text
            new = settings_form(env, address=other, pay_within_h="48")
            typo = {**new, "address": mistyped(other), "confirm": ""}
            said = errors_of(await owner.post(base, data={"csrf": csrf, **typo}))
            assert "checksum does not match" in said["address"] and "confirm" not in said
            for confirm in ("", "not my password"):
                answer = await owner.post(base, data={"csrf": csrf, **new, "confirm": confirm})
                assert answer.status_code == 400
                assert "Enter your password or a current code" in errors_of(answer)["confirm"]
                assert "not my password" not in answer.text
            assert (await env.features.shop.settings(env.bot["id"]))["address"] == env.shop_wallet
            moved = await owner.post(base, data={"csrf": csrf, **new})
            assert moved.status_code == 303
            assert (await env.features.shop.settings(env.bot["id"]))["address"] == other
            # With two-step sign-in on, a current code from the app does as well.
            secret = pyotp.random_base32()
            await pool.execute("UPDATE users SET totp_secret = $1 WHERE role = 'owner'", secret)
            code = pyotp.TOTP(secret).now()
            coins = {**new, "accept_trx": "", "confirm": code}
            assert (await owner.post(base, data={"csrf": csrf, **coins})).status_code == 303

            dashboard = await owner.get("/")
            assert 'id="money-changes"' in dashboard.text
            assert f"…{env.shop_wallet[-6:]} → …{other[-6:]}" in dashboard.text
            assert "USDT and TRX → USDT only" in dashboard.text
            assert "by Owner &lt;owner@example.com&gt;" in dashboard.text
            switched = await owner.post("/language", data={"csrf": csrf, "language": "fa"})
            assert switched.status_code == 303
            persian = await owner.get("/")
            heading = "نشانی، شبکه، ارزها یا متن‌های پرداخت یک فروشگاه در ۷ روز گذشته تغییر کرده است"
            assert heading in persian.text
            # A week later the dashboard no longer says it (the audit log still does).
            await pool.execute("UPDATE audit_log SET at = at - interval '8 days'")
            assert 'id="money-changes"' not in (await owner.get("/")).text
    changes = await pool.fetch(
        "SELECT actor, target, before, after FROM audit_log"
        " WHERE kind = 'shop.money_changed' ORDER BY id"
    )
    assert [(c["before"], c["after"]) for c in changes] == [
        (
            {
                "network": "mainnet",
                "address_tail": env.shop_wallet[-6:],
                "accept_usdt": True,
                "accept_trx": True,
            },
            {
                "network": "mainnet",
                "address_tail": other[-6:],
                "accept_usdt": True,
                "accept_trx": True,
            },
        ),
        (
            {
                "network": "mainnet",
                "address_tail": other[-6:],
                "accept_usdt": True,
                "accept_trx": True,
            },
            {
                "network": "mainnet",
                "address_tail": other[-6:],
                "accept_usdt": True,
                "accept_trx": False,
            },
        ),
    ]
    assert {c["actor"] for c in changes} == {"Owner <owner@example.com>"}
    assert {c["target"] for c in changes} == {f"@{BOT}"}
    # The admin's pay window was saved and audited; their refused attempts changed nothing.
    admin_rows = await pool.fetch(
        "SELECT kind, after FROM audit_log WHERE actor LIKE 'Admin%' AND kind LIKE 'shop.%'"
    )
    assert [(r["kind"], r["after"]) for r in admin_rows] == [
        ("shop.settings_changed", {"pay_within_h": 48})
    ]


async def test_test_networks_are_refused_without_their_setting(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """M3: Nile and Shasta are refused (code shop_network) and not offered unless
    SPONSORBOT_ALLOW_TESTNET is on."""
    async with panel_env(pool, db_dsn, tmp_path) as env, client(env.app) as http:
        csrf = await signed_in(env, http)
        base = f"/bots/{env.bot['id']}/shop"
        page = await http.get(base)
        assert 'value="nile"' not in page.text and 'value="shasta"' not in page.text
        assert "Test networks are off on this server" in page.text
        refused = await http.post(base, data={"csrf": csrf, **settings_form(env, network="nile")})
        assert refused.status_code == 400
        assert "Test networks are off on this server" in errors_of(refused)["network"]
        with pytest.raises(Invalid) as caught:
            await env.features.shop.save_settings(
                env.bot["id"], ShopConfig(network="shasta", address=env.shop_wallet)
            )
        assert caught.value.code == "shop_network"
        assert await pool.fetchval("SELECT count(*) FROM shop_settings") == 0


async def test_test_networks_with_their_setting(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """With SPONSORBOT_ALLOW_TESTNET on, the owner sets a shop to Nile."""
    async with (
        panel_env(pool, db_dsn, tmp_path, allow_testnet=True) as env,
        client(env.app) as http,
    ):
        csrf = await signed_in(env, http, "owner")
        base = f"/bots/{env.bot['id']}/shop"
        assert 'value="shasta"' in (await http.get(base)).text
        saved = await http.post(base, data={"csrf": csrf, **settings_form(env, network="nile")})
        assert saved.status_code == 303, errors_of(saved)
        assert (await env.features.shop.settings(env.bot["id"]))["network"] == "nile"


async def test_an_unreadable_trongrid_key_is_said_and_can_be_replaced(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """M5: a key sealed under an installation key that is gone reads as no key (the server's
    is used), is logged once, and the settings page says so instead of a 500 and takes a
    new one."""
    async with panel_env(pool, db_dsn, tmp_path) as env, client(env.app) as http:
        await open_shop(env)
        gone = TokenBox(b"an installation key that is no longer configured here")
        await pool.execute("UPDATE shop_settings SET api_key = $1", gone.seal(KEY))
        shop = env.features.shop
        caplog.clear()
        stored = await shop.settings(env.bot["id"])
        assert stored["api_key_tail"] is None and stored["key_unreadable"] is True
        assert await shop.api_key(env.bot["id"]) is None
        assert await shop.api_key(env.bot["id"]) is None
        said = [r for r in caplog.records if "TronGrid key cannot be decrypted" in r.getMessage()]
        assert len(said) == 1 and said[0].levelname == "WARNING"  # once, not on every check

        csrf = await signed_in(env, http)
        base = f"/bots/{env.bot['id']}/shop"
        page = await http.get(base)
        assert page.status_code == 200 and 'id="key-unreadable"' in page.text
        assert "The stored TronGrid key cannot be read" in page.text
        assert 'name="remove_api_key"' in page.text
        _, token = await TokenService(pool).create("reader", "analyst")
        api = await http.get(
            f"/api/v1/bots/{env.bot['id']}/shop", headers={"Authorization": f"Bearer {token}"}
        )
        assert api.status_code == 200 and api.json()["key_unreadable"] is True
        await http.post("/language", data={"csrf": csrf, "language": "fa"})
        persian = await http.get(base)
        assert persian.status_code == 200
        assert "کلید ذخیره‌شدهٔ \u2066TronGrid\u2069 خوانا نیست" in persian.text
        await http.post("/language", data={"csrf": csrf, "language": "en"})

        new_key = "0c7e4b1a-new-key-4321"
        replaced = await http.post(
            base, data={"csrf": csrf, **settings_form(env, api_key=new_key, confirm="")}
        )
        assert replaced.status_code == 303, errors_of(replaced)
        stored = await shop.settings(env.bot["id"])
        assert stored["api_key_tail"] == "4321" and stored["key_unreadable"] is False
        assert await shop.api_key(env.bot["id"]) == new_key
        assert 'id="key-unreadable"' not in (await http.get(base)).text
    change = await pool.fetchrow(
        "SELECT before, after FROM audit_log WHERE kind = 'shop.settings_changed'"
    )
    assert change["before"] == {"trongrid_key": "unreadable"}
    assert change["after"] == {"trongrid_key": "replaced"}
