"""The shop's other results (products, transfers with their claims, the settings, what needs
the owner): frozen, money as strings and addresses in Base58, read by name as the dicts were,
and the owner API's models built from their attributes."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest

from sponsorbot.features.shop.orders import Attention, Stuck
from sponsorbot.features.shop.products import Product
from sponsorbot.features.shop.settings import CALLS_PER_HOUR, ShopSettings
from sponsorbot.features.shop.transfers import Claim, Transfer, TransferPage
from sponsorbot.tron.address import parse_address
from sponsorbot.web.api.models_shop import ProductOut, ShopSettingsOut, TransferOut
from sponsorbot.web.api.models_shop import TransferPage as TransferPageOut

ADDRESS = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
T0 = datetime(2026, 12, 1, 12, tzinfo=UTC)


def transfer_row(**changes: Any) -> dict[str, Any]:
    """A transfer as queries.TRANSFER reads it, credited to an order by its amount."""
    row: dict[str, Any] = {
        "id": 4, "network": "mainnet", "tx_hash": "cd" * 32, "coin": "TRX",
        "amount": Decimal("8.000000"), "from_address": None,
        "to_address": parse_address(ADDRESS), "block_time": T0, "state": "credited",
        "reason": None, "order_bot_id": 1, "order_id": 7, "credited_usdt": Decimal("2.000000"),
        "matched_by": "amount", "seen_at": T0, "decided_at": T0, "decided_by": None, "note": None,
    }  # fmt: skip
    return {**row, **changes}


def test_a_product_shows_its_price_as_a_string() -> None:
    row = {
        "id": 3, "bot_id": 1, "kind": "banner", "title": "Banner", "description": "",
        "price_usdt": Decimal("5.500000"), "joins": None, "days": 7, "active": True,
        "position": 0, "title_fa": "بنر", "description_fa": "",
    }  # fmt: skip
    product = Product.of(row)
    assert (product.price_usdt, product["title_fa"], {**product}["days"]) == ("5.5", "بنر", 7)
    with pytest.raises(dataclasses.FrozenInstanceError):
        product.active = False  # type: ignore[misc]
    shown = ProductOut.model_validate(product).model_dump(mode="json")
    assert list(shown) == list(ProductOut.model_fields) and shown["price_usdt"] == "5.5"


def test_a_claim_reads_its_time_from_the_json_postgresql_builds() -> None:
    data = {
        "order_id": 7, "bot_id": 1, "status": "rejected", "reason": "wrong_amount",
        "submitted_at": "2026-12-01T15:30:00.1234+03:30",
    }  # fmt: skip
    claim = Claim.of(data)
    tehran = timezone(timedelta(hours=3, minutes=30))
    assert claim.submitted_at == datetime(2026, 12, 1, 15, 30, 0, 123400, tzinfo=tehran)
    assert claim.submitted_at == datetime(2026, 12, 1, 12, 0, 0, 123400, tzinfo=UTC)


def test_a_transfer_shows_its_money_as_strings_and_its_addresses_in_base58() -> None:
    claim = Claim(order_id=7, bot_id=1, status="credited", reason=None, submitted_at=T0)
    transfer = Transfer.of(transfer_row(), (claim,))
    assert (transfer.amount, transfer.credited_usdt) == ("8", "2")
    assert (transfer.from_address, transfer.to_address) == (None, ADDRESS)
    assert transfer["claims"][0]["order_id"] == 7
    waiting = Transfer.of(transfer_row(state="unattributed", credited_usdt=None), ())
    assert (waiting.credited_usdt, waiting.claims) == (None, ())

    page = TransferPage(items=(transfer, waiting), next_before=3)
    shown = TransferPageOut.model_validate(page).model_dump(mode="json")
    assert shown["next_before"] == 3 and [t["id"] for t in shown["items"]] == [4, 4]
    first = shown["items"][0]
    assert list(first) == list(TransferOut.model_fields) and first["to_address"] == ADDRESS
    said = {
        "order_id": 7, "bot_id": 1, "status": "credited", "reason": None,
        "submitted_at": "2026-12-01T12:00:00Z",
    }  # fmt: skip
    assert first["claims"] == [said]
    assert shown["items"][1]["claims"] == []


def test_the_settings_and_what_needs_the_owner() -> None:
    settings = ShopSettings(
        bot_id=1, enabled=True, network="mainnet", address=ADDRESS, accept_usdt=True,
        accept_trx=False, api_key_tail="1234", key_unreadable=False, pay_within_h=24,
        trongrid_calls=2,
    )  # fmt: skip
    assert settings.trongrid_budget == CALLS_PER_HOUR and settings["api_key_tail"] == "1234"
    shown = ShopSettingsOut.model_validate(settings).model_dump(mode="json")
    assert list(shown) == list(ShopSettingsOut.model_fields)
    assert shown == {k: settings[k] for k in ShopSettingsOut.model_fields}

    stuck = Stuck(id=7, bot_id=1, state="paid", kind="banner", start_tries=3, updated_at=T0)
    attention = Attention(stuck=(stuck,), waiting_transfers=2)
    assert attention["stuck"][0]["start_tries"] == 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        attention.waiting_transfers = 0  # type: ignore[misc]
