"""M3: the texts that tell an advertiser where and how much to pay (`shop_pay` and its kin) are
the owner's, in the panel (with their password or a current code) and through the owner API
(an owner token); an admin still changes every other text. A refused save changes nothing, and
each change of a money text is audited and shown on the owner's dashboard."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pyotp

from sponsorbot.features.shop.payout import MONEY_TEXTS, MONEY_TEXTS_CHANGED
from sponsorbot.features.texts_shop import SHOP_TEXTS
from tests.integration.panel_kit import PASSWORD, PanelApp, add_member, client, csrf_of, sign_in
from tests.integration.test_api_owner import connect_bot, owner_api

OWNERS_PAY = "Order #{order}: pay {amounts} to <code>{address}</code> by {expires}."
THIEFS_PAY = "Order #{order}: pay {amounts} to TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf by {expires}."


async def connect(panel: PanelApp) -> dict[str, Any]:
    bot = await panel.sim.create_bot("money_texts_bot")  # type: ignore[attr-defined]
    added = await panel.engine.bots.add(bot["token"], "polling")
    return {**bot, "id": added["id"]}


async def signed_in(panel: PanelApp, http: httpx.AsyncClient, role: str) -> str:
    await sign_in(http, await add_member(panel.pool, role))
    return await csrf_of(http, "/bots")


async def stored(pool: asyncpg.Pool) -> dict[str, dict[str, str]]:
    texts: dict[str, dict[str, str]] = await pool.fetchval("SELECT texts FROM bot_settings")
    return texts


async def money_entries(pool: asyncpg.Pool) -> list[asyncpg.Record]:
    rows: list[asyncpg.Record] = await pool.fetch(
        "SELECT actor, target, before, after FROM audit_log WHERE kind = $1 ORDER BY id",
        MONEY_TEXTS_CHANGED,
    )
    return rows


def errors_of(page: httpx.Response) -> dict[str, str]:
    """Each field's error on a page, by the field's name."""
    return dict(re.findall(r'<p class="error" id="e-([\w.-]+)">([^<]*)</p>', page.text))


def test_every_text_that_names_the_address_or_the_amounts_is_a_money_text() -> None:
    naming = {
        key for key, text in SHOP_TEXTS["en"].items() if "{address}" in text or "{amounts}" in text
    }
    assert naming >= {"shop_pay", "shop_qr_caption", "shop_still_due", "shop_reminder"}
    assert naming | {"shop_amount_usdt", "shop_amount_trx", "shop_or"} == MONEY_TEXTS


async def test_an_admin_changes_visitor_texts_but_not_where_to_pay(panel: PanelApp) -> None:
    bot = await connect(panel)
    await panel.services.bot_settings.set_texts(bot["id"], {"en": {"shop_pay": OWNERS_PAY}})
    base = f"/bots/{bot['id']}"
    async with client(panel.app) as admin:
        csrf = await signed_in(panel, admin, "admin")
        page = await admin.get(f"{base}/settings")
        # Shown, turned off (so a browser does not send them), with why; no password asked.
        for key in ("shop_pay", "shop_qr_caption", "shop_amount_usdt"):
            assert re.search(rf'<textarea id="f-en\.{key}" [^>]* disabled>', page.text), key
            assert f'id="money-{key}"' in page.text
        assert "Only the owner can change this text" in page.text
        assert re.search(r'<textarea id="f-en\.welcome" [^>]*(?<! disabled)>', page.text)
        assert 'name="confirm"' not in page.text

        # What a browser sends: every enabled text, none of the disabled ones.
        saved = await admin.post(
            f"{base}/texts", data={"csrf": csrf, "en.welcome": "Hi there", "fa.welcome": ""}
        )
        assert saved.status_code == 303
        assert await stored(panel.pool) == {"en": {"welcome": "Hi there", "shop_pay": OWNERS_PAY}}

        # A forged post is refused whole: the visitor text sent with it is not saved either.
        forged: list[dict[str, str]] = [
            {"en.shop_pay": THIEFS_PAY},
            {"en.shop_pay": ""},  # back to the default is a change too
            {"fa.shop_qr_caption": "Scan: {address}"},
            {"en.shop_amount_usdt": "<code>1</code> USDT", "confirm": PASSWORD},
        ]
        for extra in forged:
            data = {"csrf": csrf, "en.welcome": "Changed", **extra}
            refused = await admin.post(f"{base}/texts", data=data)
            assert refused.status_code == 403, extra
            assert "Only the owner can change the texts that tell advertisers" in refused.text
            assert "Nothing was saved" in refused.text
            assert THIEFS_PAY not in refused.text
        assert await stored(panel.pool) == {"en": {"welcome": "Hi there", "shop_pay": OWNERS_PAY}}
    assert await money_entries(panel.pool) == []


async def test_the_owner_changes_where_to_pay_with_a_password_and_the_dashboard_says_so(
    panel: PanelApp,
) -> None:
    bot = await connect(panel)
    base = f"/bots/{bot['id']}"
    async with client(panel.app) as owner:
        csrf = await signed_in(panel, owner, "owner")
        page = await owner.get(f"{base}/settings")
        assert 'name="confirm"' in page.text
        assert re.search(r'<textarea id="f-en\.shop_pay" [^>]*(?<! disabled)>', page.text)
        assert "changing it takes your password" in page.text

        for confirm in ("", "not my password"):
            data = {"csrf": csrf, "en.shop_pay": OWNERS_PAY, "en.welcome": "Hi", "confirm": confirm}
            refused = await owner.post(f"{base}/texts", data=data)
            assert refused.status_code == 422
            assert "Enter your password or a current code" in errors_of(refused)["confirm"]
            assert OWNERS_PAY.replace("<", "&lt;").replace(">", "&gt;") in refused.text  # kept
            assert "not my password" not in refused.text
        assert await panel.pool.fetchval("SELECT texts FROM bot_settings") in (None, {})

        data = {"csrf": csrf, "en.shop_pay": OWNERS_PAY, "en.welcome": "Hi", "confirm": PASSWORD}
        assert (await owner.post(f"{base}/texts", data=data)).status_code == 303
        assert await stored(panel.pool) == {"en": {"welcome": "Hi", "shop_pay": OWNERS_PAY}}
        # Other texts need no password while the money texts are sent as they are.
        data = {"csrf": csrf, "en.shop_pay": OWNERS_PAY, "en.welcome": "Hello"}
        assert (await owner.post(f"{base}/texts", data=data)).status_code == 303
        # With two-step sign-in on, a current code from the app does as well.
        secret = pyotp.random_base32()
        await panel.pool.execute("UPDATE users SET totp_secret = $1 WHERE role = 'owner'", secret)
        data = {
            "csrf": csrf,
            "en.welcome": "Hello",
            "en.shop_pay": "",
            "fa.shop_pay": "سفارش #{order}: {amounts} به {address}",
            "confirm": pyotp.TOTP(secret).at(panel.clock()),
        }
        assert (await owner.post(f"{base}/texts", data=data)).status_code == 303
        assert await stored(panel.pool) == {
            "en": {"welcome": "Hello"},
            "fa": {"shop_pay": "سفارش #{order}: {amounts} به {address}"},
        }

        dashboard = await owner.get("/")
        assert 'id="money-changes"' in dashboard.text and "@money_texts_bot" in dashboard.text
        # It says which texts, not an address that did not change.
        assert "payment texts" in dashboard.text and "en.shop_pay" in dashboard.text
        audit = await owner.get("/audit?kind=shop.money_changed")
        assert audit.text.count('"What">Shop\'s payment texts changed <bdi') == 2

    entries = await money_entries(panel.pool)
    assert [(e["before"], e["after"]) for e in entries] == [
        ({"texts": {"en.shop_pay": None}}, {"texts": {"en.shop_pay": OWNERS_PAY}}),
        (
            {"texts": {"en.shop_pay": OWNERS_PAY, "fa.shop_pay": None}},
            {
                "texts": {
                    "en.shop_pay": None,
                    "fa.shop_pay": "سفارش #{order}: {amounts} به {address}",
                }
            },
        ),
    ]
    assert {(e["actor"], e["target"]) for e in entries} == {
        ("Owner <owner@example.com>", "@money_texts_bot")
    }


async def test_the_api_takes_an_owner_token_to_change_where_to_pay(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with owner_api(pool, db_dsn, tmp_path) as api:
        bot = await connect_bot(api, "money_texts_api_bot")
        url = f"/api/v1/bots/{bot['id']}/texts"
        minted = await api.http.post("/api/v1/tokens", json={"name": "ci-admin", "role": "admin"})
        admin = {"Authorization": f"Bearer {minted.json()['token']}"}

        visitor = {"overrides": {"en": {"welcome": "Hi"}, "fa": {"shop_pay": ""}}}
        assert (await api.http.put(url, json=visitor, headers=admin)).status_code == 200
        forged = {"overrides": {"en": {"welcome": "Changed", "shop_pay": THIEFS_PAY}}}
        refused = await api.http.put(url, json=forged, headers=admin)
        assert refused.status_code == 403
        assert "owner token" in refused.json()["error"] and "en.shop_pay" in refused.json()["error"]
        assert (await api.http.get(url)).json()["overrides"] == {"en": {"welcome": "Hi"}}

        mine = {"overrides": {"en": {"welcome": "Hi", "shop_pay": OWNERS_PAY}}}
        changed = await api.http.put(url, json=mine)
        assert changed.status_code == 200 and changed.json()["overrides"]["en"]["shop_pay"]
        # A PUT replaces every override: an admin leaving out the owner's text would reset it.
        reset = await api.http.put(
            url, json={"overrides": {"en": {"welcome": "Yo"}}}, headers=admin
        )
        assert reset.status_code == 403
        again = {"overrides": {"en": {"welcome": "Yo", "shop_pay": OWNERS_PAY}}}
        assert (await api.http.put(url, json=again, headers=admin)).status_code == 200
        assert (await api.http.get(url)).json()["overrides"] == again["overrides"]

    entries = await money_entries(pool)
    assert [(e["actor"], e["target"], e["before"], e["after"]) for e in entries] == [
        (
            "api:test",
            "@money_texts_api_bot",
            {"texts": {"en.shop_pay": None}},
            {"texts": {"en.shop_pay": OWNERS_PAY}},
        )
    ]
