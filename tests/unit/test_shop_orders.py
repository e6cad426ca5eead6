"""The shop's order results: frozen, addresses in Base58 and money as strings, read by name as
the dicts were, and the owner API's models built from their attributes."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest

from sponsorbot.features.shop.orders import Order, OrderPage, Payment, PaymentPage, Step
from sponsorbot.tron.address import parse_address
from sponsorbot.web.api.models_shop import OrderOut
from sponsorbot.web.api.models_shop import OrderPage as OrderPageOut
from sponsorbot.web.api.models_shop import PaymentPage as PaymentPageOut

ADDRESS = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
T0 = datetime(2026, 12, 1, 12, tzinfo=UTC)


def order_row(**changes: Any) -> dict[str, Any]:
    """An order as queries.ORDER reads it, approved and partly paid."""
    row: dict[str, Any] = {
        "id": 7, "bot_id": 1, "product_id": 3, "kind": "banner", "title": "Banner",
        "joins": None, "days": 3, "user_id": 42, "user_name": "Ada", "language": "en",
        "material": {"text": "Hi", "url": "https://a.example"},
        "price_usdt": Decimal("5.500000"), "state": "partly_paid", "note": None,
        "network": "mainnet", "address": parse_address(ADDRESS), "accept_usdt": True,
        "accept_trx": True, "approved_at": T0, "usdt_per_trx": Decimal("0.250000000000"),
        "rate_source": "kraken", "expires_at": T0, "due_at": T0, "reminded": 1,
        "paid_usdt": Decimal("2.000000"), "qr_file_id": None, "campaign_id": None,
        "broadcast_id": None, "started_at": None, "ends_at": None, "ended_at": None,
        "report": None, "created_at": T0, "updated_at": T0, "due_usdt": Decimal("3.500017"),
        "due_trx": None, "start_after": None, "start_tries": 0, "rate_at": T0, "zone": "UTC",
    }  # fmt: skip
    return {**row, **changes}


def payment_row(**changes: Any) -> dict[str, Any]:
    """A payment as queries.PAYMENTS_OF_ORDER reads it, credited."""
    row: dict[str, Any] = {
        "id": 9, "order_id": 7, "bot_id": 1, "tx_hash": "ab" * 32, "source": "bot",
        "status": "credited", "reason": None, "coin": "TRX", "amount": Decimal("8.000000"),
        "from_address": parse_address(ADDRESS), "to_address": None,
        "credited_usdt": Decimal("2.000000"), "block_time": T0, "checks": 2, "last_error": None,
        "next_check_at": T0, "submitted_at": T0, "decided_at": T0,
    }  # fmt: skip
    return {**row, **changes}


def test_an_order_shows_its_money_as_strings_and_its_address_in_base58() -> None:
    step = Step(at=T0, kind="approved", actor="api:test", data={})
    order = Order.of(order_row(), payments=(Payment.of(payment_row()),), timeline=(step,))
    assert (order.price_usdt, order.paid_usdt, order.left_usdt, order.extra_usdt) == (
        "5.5",
        "2",
        "3.5",
        "0",
    )
    assert (order.usdt_per_trx, order.due_usdt, order.due_trx) == ("0.25", "3.500017", None)
    assert order.address == ADDRESS and order.payments[0].from_address == ADDRESS
    assert order.payments[0].to_address is None and order.payments[0].amount == "8"
    # Read by name as well, for the callers written when the results were dicts.
    assert order["state"] == "partly_paid" and order["payments"][0]["status"] == "credited"
    assert {**order}["left_usdt"] == "3.5"
    with pytest.raises(dataclasses.FrozenInstanceError):
        order.state = "paid"  # type: ignore[misc]


def test_an_order_paid_over_its_price_and_one_never_approved() -> None:
    over = Order.of(order_row(paid_usdt=Decimal("6.25")))
    assert (over.left_usdt, over.extra_usdt) == ("0", "0.75")
    fresh = Order.of(order_row(address=None, usdt_per_trx=None, due_usdt=None, network=None))
    assert (fresh.address, fresh.usdt_per_trx, fresh.due_usdt) == (None, None, None)
    assert (fresh.payments, fresh.timeline, fresh.payment_count) == ((), (), None)


def test_the_api_models_read_the_results_attributes() -> None:
    listed = Order.of(order_row(bot_username="shop_bot", payment_count=1))
    page = OrderPage(items=(listed,), next_before=None, counts={"partly_paid": 1})
    shown = OrderPageOut.model_validate(page).model_dump(mode="json")
    assert shown["counts"] == {"partly_paid": 1} and shown["next_before"] is None
    (item,) = shown["items"]
    assert list(item) == list(OrderOut.model_fields)
    assert item["payment_count"] == 1 and item["payments"] == [] and item["timeline"] == []
    assert item["address"] == ADDRESS and item["left_usdt"] == "3.5"

    payments = PaymentPage(items=(Payment.of(payment_row(network="mainnet")),), next_before=9)
    shown = PaymentPageOut.model_validate(payments).model_dump(mode="json")
    assert shown["next_before"] == 9 and shown["items"][0]["credited_usdt"] == "2"
    assert "network" not in shown["items"][0]
