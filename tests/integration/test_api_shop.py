"""The shop through the owner API: settings (the TronGrid key never shown), products, orders
and their moves, a hash added for an advertiser; bad input is a clear 4xx and changes nothing."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import asyncpg

from sponsorbot.tron.address import parse_address
from tests.integration.test_api_owner import connect_bot, owner_api

ADDRESS = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
HASH = "ab" * 32


async def test_the_shop_through_the_api(pool: asyncpg.Pool, db_dsn: str, tmp_path: Path) -> None:
    async with owner_api(pool, db_dsn, tmp_path) as api:
        bot = await connect_bot(api, "shop_api_bot")
        base = f"/api/v1/bots/{bot['id']}/shop"
        empty = await api.http.get(base)
        assert empty.status_code == 200 and empty.json()["enabled"] is False

        broken = ADDRESS[:-1] + "u"
        refused = await api.http.put(base, json={"enabled": True, "address": broken})
        assert refused.status_code == 422 and "checksum" in refused.json()["error"]
        coins = await api.http.put(base, json={"accept_usdt": False, "accept_trx": False})
        assert coins.status_code == 422
        key = "7f1c0a9e-api-key-5678"
        saved = await api.http.put(
            base,
            json={"enabled": True, "address": ADDRESS, "accept_trx": False, "api_key": key},
        )
        assert saved.status_code == 200, saved.text
        assert saved.json()["api_key_tail"] == "5678" and key not in saved.text
        # A PUT replaces the settings; no api_key keeps the stored one. (TRX stays off: this
        # test has no price source to ask.)
        kept = await api.http.put(
            base, json={"enabled": True, "address": ADDRESS, "accept_trx": False}
        )
        assert kept.json()["api_key_tail"] == "5678"

        zero = await api.http.post(
            f"{base}/products", json={"kind": "banner", "title": "B", "price_usdt": "0"}
        )
        assert zero.status_code == 422 and "more than 0" in zero.json()["error"]
        no_days = await api.http.post(
            f"{base}/products", json={"kind": "banner", "title": "B", "price_usdt": "5"}
        )
        assert no_days.status_code == 422
        made = await api.http.post(
            f"{base}/products",
            json={"kind": "banner", "title": "Banner", "price_usdt": "5.5", "days": 3},
        )
        assert made.status_code == 201 and made.json()["price_usdt"] == "5.5"
        product = made.json()

        order_id = await pool.fetchval(
            "INSERT INTO shop_orders (bot_id, product_id, kind, title, days, user_id, material,"
            " price_usdt) VALUES ($1, $2, 'banner', 'Banner', 3, 42, $3, 5.5) RETURNING id",
            bot["id"],
            product["id"],
            {"text": "Hi", "url": "https://a.example"},
        )
        listed = await api.http.get("/api/v1/shop/orders", params={"state": "submitted"})
        assert [o["id"] for o in listed.json()["items"]] == [order_id]
        assert listed.json()["counts"] == {"submitted": 1}
        bad_state = await api.http.get("/api/v1/shop/orders", params={"state": "lost"})
        assert bad_state.status_code == 422

        early = await api.http.post(
            f"/api/v1/shop/orders/{order_id}/payments", json={"tx_hash": HASH}
        )
        assert early.status_code == 409
        no_reason = await api.http.post(f"/api/v1/shop/orders/{order_id}/reject", json={})
        assert no_reason.status_code == 422
        approved = await api.http.post(f"/api/v1/shop/orders/{order_id}/approve")
        assert approved.status_code == 200, approved.text
        order = approved.json()
        assert order["state"] == "awaiting_payment" and order["address"] == ADDRESS
        assert order["usdt_per_trx"] is None and order["left_usdt"] == "5.5"

        not_hash = await api.http.post(
            f"/api/v1/shop/orders/{order_id}/payments", json={"tx_hash": "https://tronscan.org/"}
        )
        assert not_hash.status_code == 422
        link = f"https://nile.tronscan.org/#/transaction/{HASH.upper()}"
        added = await api.http.post(
            f"/api/v1/shop/orders/{order_id}/payments", json={"tx_hash": link}
        )
        assert added.status_code == 201, added.text
        assert [p["tx_hash"] for p in added.json()["payments"]] == [HASH]
        again = await api.http.post(
            f"/api/v1/shop/orders/{order_id}/payments", json={"tx_hash": HASH}
        )
        assert again.status_code == 409

        cancelled = await api.http.post(
            f"/api/v1/shop/orders/{order_id}/cancel", json={"reason": "asked"}
        )
        assert cancelled.json()["state"] == "cancelled"
        kinds = [step["kind"] for step in cancelled.json()["timeline"]]
        assert kinds == ["approved", "hash_submitted", "cancelled"]
        twice = await api.http.post(f"/api/v1/shop/orders/{order_id}/cancel")
        assert twice.status_code == 409 and "cancelled" in twice.json()["error"]
        missing = await api.http.get("/api/v1/shop/orders/999999")
        assert missing.status_code == 404
        payments = await api.http.get("/api/v1/shop/payments", params={"bot_id": bot["id"]})
        assert [p["status"] for p in payments.json()["items"]] == ["checking"]


async def test_an_editor_reads_the_shop_but_cannot_change_it(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with owner_api(pool, db_dsn, tmp_path) as api:
        bot = await connect_bot(api, "shop_editor_bot")
        made = await api.http.post("/api/v1/tokens", json={"name": "ed", "role": "editor"})
        editor = {"Authorization": f"Bearer {made.json()['token']}"}
        base = f"/api/v1/bots/{bot['id']}/shop"
        assert (await api.http.get(base, headers=editor)).status_code == 200
        assert (await api.http.get("/api/v1/shop/orders", headers=editor)).status_code == 200
        changed = await api.http.put(base, json={"enabled": False}, headers=editor)
        assert changed.status_code == 403
        product = {"kind": "banner", "title": "B", "price_usdt": "1", "days": 1}
        refused = await api.http.post(f"{base}/products", json=product, headers=editor)
        assert refused.status_code == 403


async def api_audit(pool: asyncpg.Pool) -> list[dict[str, Any]]:
    rows = await pool.fetch(
        "SELECT actor, kind, target, before, after FROM audit_log"
        " WHERE actor LIKE 'api:%' ORDER BY id"
    )
    return [dict(r) for r in rows]


async def test_where_the_money_goes_takes_an_owner_token_and_every_change_is_audited(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """M3: an admin token changes the shop's other settings, not its address, network or
    coins; every change made through the API is in the audit log as `api:<token name>`, and a
    refused call is not."""
    async with owner_api(pool, db_dsn, tmp_path) as api:
        bot = await connect_bot(api, "shop_audit_bot")
        base = f"/api/v1/bots/{bot['id']}/shop"
        settings = {"enabled": True, "address": ADDRESS, "accept_trx": False}
        assert (await api.http.put(base, json=settings)).status_code == 200
        made = await api.http.post(
            f"{base}/products", json={"kind": "banner", "title": "B", "price_usdt": "5", "days": 3}
        )
        assert made.status_code == 201
        product_id = made.json()["id"]
        minted = await api.http.post("/api/v1/tokens", json={"name": "ci-admin", "role": "admin"})
        admin = {"Authorization": f"Bearer {minted.json()['token']}"}
        assert (await api.http.get("/api/v1/me", headers=admin)).json()["role"] == "admin"
        written = await api_audit(pool)

        # Refused calls leave nothing: bad input, a wrong role, no token at all.
        zero = {"kind": "banner", "title": "B", "price_usdt": "0", "days": 3}
        assert (await api.http.post(f"{base}/products", json=zero)).status_code == 422
        other = "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf"
        for change in ({"address": other}, {"accept_usdt": False, "accept_trx": True}):
            refused = await api.http.put(base, json={**settings, **change}, headers=admin)
            assert refused.status_code == 403 and "owner" in refused.json()["error"]
        testnet = await api.http.put(base, json={**settings, "network": "nile"})
        assert testnet.status_code == 422 and testnet.json()["code"] == "shop_network"
        anonymous = await api.http.delete(
            f"{base}/products/{product_id}", headers={"Authorization": ""}
        )
        assert anonymous.status_code == 401
        assert await api_audit(pool) == written
        stored = (await api.http.get(base)).json()
        assert stored["address"] == ADDRESS and stored["network"] == "mainnet"

        # The admin's token saves what is not money, sending the rest unchanged.
        kept = await api.http.put(base, json={**settings, "pay_within_h": 48}, headers=admin)
        assert kept.status_code == 200 and kept.json()["pay_within_h"] == 48
        moved = await api.http.put(base, json={**settings, "address": other})
        assert moved.status_code == 200 and moved.json()["address"] == other
        gone = await api.http.delete(f"{base}/products/{product_id}", headers=admin)
        assert gone.status_code == 204

    entries = await api_audit(pool)
    shop = [(e["actor"], e["kind"], e["target"]) for e in entries if e["target"] != "/api/v1/bots"]
    assert shop == [
        ("api:test", "shop.money_changed", "@shop_audit_bot"),
        ("api:test", "api.put_shop", base),
        ("api:test", "api.create_product", f"{base}/products"),
        ("api:test", "api.create_token", "/api/v1/tokens"),
        ("api:ci-admin", "api.put_shop", base),
        ("api:test", "shop.money_changed", "@shop_audit_bot"),
        ("api:test", "api.put_shop", base),
        ("api:ci-admin", "api.delete_product", f"{base}/products/{product_id}"),
    ]
    created = next(e for e in entries if e["kind"] == "api.create_product")
    assert created["after"] == {
        "method": "POST",
        "route": "/bots/{bot_id}/shop/products",
        "status": 201,
    }
    money = [e for e in entries if e["kind"] == "shop.money_changed"]
    assert money[0]["before"]["address_tail"] is None
    assert money[0]["after"] == {
        "network": "mainnet",
        "address_tail": ADDRESS[-6:],
        "accept_usdt": True,
        "accept_trx": False,
    }
    assert money[1]["before"]["address_tail"] == ADDRESS[-6:]
    assert money[1]["after"]["address_tail"] == other[-6:]


TRANSFER = """
INSERT INTO shop_transfers (network, tx_hash, coin, amount, from_address, to_address, block_time,
                            reason)
VALUES ('mainnet', $1, 'USDT', $2, NULL, $3, now(), 'no_match')
RETURNING id
"""


async def test_transfers_that_match_no_order_are_assigned_or_returned_through_the_api(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with owner_api(pool, db_dsn, tmp_path) as api:
        bot = await connect_bot(api, "shop_transfers_bot")
        base = f"/api/v1/bots/{bot['id']}/shop"
        await api.http.put(base, json={"enabled": True, "address": ADDRESS, "accept_trx": False})
        product = await api.http.post(
            f"{base}/products", json={"kind": "banner", "title": "B", "price_usdt": "5", "days": 1}
        )
        order_id = await pool.fetchval(
            "INSERT INTO shop_orders (bot_id, product_id, kind, title, days, user_id, material,"
            " price_usdt) VALUES ($1, $2, 'banner', 'B', 1, 42, $3, 5) RETURNING id",
            bot["id"],
            product.json()["id"],
            {"text": "Hi", "url": "https://a.example"},
        )
        order = (await api.http.post(f"/api/v1/shop/orders/{order_id}/approve")).json()
        # Each order asks for its own exact amount: the price and a tail of millionths.
        assert order["due_usdt"] != "5" and order["due_usdt"].startswith("5.00")
        address = parse_address(ADDRESS)
        part = await pool.fetchval(TRANSFER, "cd" * 32, Decimal("2"), address)
        gift = await pool.fetchval(TRANSFER, "ef" * 32, Decimal("1"), address)

        waiting = await api.http.get("/api/v1/shop/transfers", params={"state": "unattributed"})
        assert [t["id"] for t in waiting.json()["items"]] == [gift, part]
        wrong = await api.http.get("/api/v1/shop/transfers", params={"state": "lost"})
        assert wrong.status_code == 422
        nowhere = await api.http.post(
            f"/api/v1/shop/transfers/{part}/assign", json={"order_id": 999999}
        )
        assert nowhere.status_code == 404
        assigned = await api.http.post(
            f"/api/v1/shop/transfers/{part}/assign", json={"order_id": order_id}
        )
        assert assigned.status_code == 200, assigned.text
        assert assigned.json()["state"] == "credited" and assigned.json()["matched_by"] == "owner"
        after = (await api.http.get(f"/api/v1/shop/orders/{order_id}")).json()
        assert (after["state"], after["paid_usdt"]) == ("partly_paid", "2")
        assert after["due_usdt"].startswith("3.00") and after["due_usdt"] != "3"
        twice = await api.http.post(
            f"/api/v1/shop/transfers/{part}/assign", json={"order_id": order_id}
        )
        assert twice.status_code == 409
        returned = await api.http.post(
            f"/api/v1/shop/transfers/{gift}/returned", json={"note": "sent back to the payer"}
        )
        assert returned.json()["state"] == "returned"
        assert returned.json()["note"] == "sent back to the payer"
        kinds = [row["kind"] for row in await api_audit(pool)]
        assert kinds[-2:] == ["api.assign_transfer", "api.return_transfer"]


async def test_a_transfer_decision_with_bad_input_is_a_clear_4xx(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with owner_api(pool, db_dsn, tmp_path) as api:
        await connect_bot(api, "shop_transfers_input_bot")
        transfer = await pool.fetchval(TRANSFER, "12" * 32, Decimal("1"), parse_address(ADDRESS))
        base = f"/api/v1/shop/transfers/{transfer}"
        nul = await api.http.post(f"{base}/returned", json={"note": "sent\x00back"})
        extra = await api.http.post(f"{base}/assign", json={"order_id": 1, "why": "x"})
        text_id = await api.http.post(f"{base}/assign", json={"order_id": "1"})
        assert [r.status_code for r in (nul, extra, text_id)] == [422, 422, 422]
        state = await pool.fetchval("SELECT state FROM shop_transfers WHERE id = $1", transfer)
        assert state == "unattributed"
