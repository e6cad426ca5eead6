"""The shop's product results: frozen, the price as a string, read by name as the dicts were,
and the owner API's model built from their attributes."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

import pytest

from sponsorbot.features.shop.products import Product
from sponsorbot.web.api.models_shop import ProductOut


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
