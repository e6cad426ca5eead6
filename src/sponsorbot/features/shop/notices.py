"""What the shop tells an advertiser, as Bot API calls: built from the order's row, in the
order's language, with the owner's text overrides. Pure: the callers queue them."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sponsorbot.engine import calls
from sponsorbot.engine.unit import QueuedCall
from sponsorbot.features.calendar import LRI, PDI, local_moment
from sponsorbot.features.shop.rules import show
from sponsorbot.features.texts import render
from sponsorbot.tron.address import to_base58

Texts = Mapping[str, Mapping[str, str]]
# In sentences that say "TRON" already, in the advertiser's language.
NETWORK_NAMES = {
    "en": {"mainnet": "mainnet", "nile": "Nile testnet", "shasta": "Shasta testnet"},
    "fa": {
        "mainnet": "شبکهٔ اصلی",
        "nile": f"شبکهٔ آزمایشی {LRI}Nile{PDI}",
        "shasta": f"شبکهٔ آزمایشی {LRI}Shasta{PDI}",
    },
}


def network_name(order: Mapping[str, Any]) -> str:
    """The order's TRON network as its advertiser reads it."""
    network = order["network"] or ""
    names = NETWORK_NAMES["fa" if order["language"] == "fa" else "en"]
    return names.get(network, network)


def when(at: datetime | None, order: Mapping[str, Any]) -> str:
    """A moment as the order's advertiser reads it: to the minute, in the workspace's time
    zone (named after it), Jalali for a Persian advertiser."""
    if at is None:
        return "?"
    return local_moment(at, order.get("zone") or "UTC", order["language"])


def short(tx_hash: str) -> str:
    """A hash shortened for a sentence (the full one is in the panel)."""
    return f"{tx_hash[:8]}…{tx_hash[-6:]}"


def amounts(order: Mapping[str, Any], texts: Texts) -> str:
    """The exact amounts the order asks for now: in USDT, in TRX at the locked rate, or either."""
    lang = order["language"]
    parts = []
    if order["accept_usdt"] and order["due_usdt"] is not None:
        parts.append(render("shop_amount_usdt", lang, texts, usdt=show(order["due_usdt"])))
    rate = order["usdt_per_trx"]
    if order["accept_trx"] and rate and order["due_trx"] is not None:
        trx = show(order["due_trx"])
        parts.append(render("shop_amount_trx", lang, texts, trx=trx, rate=show(rate)))
    return render("shop_or", lang, texts).join(parts)


def say(order: Mapping[str, Any], key: str, texts: Texts, **values: Any) -> QueuedCall:
    """A plain message to the order's advertiser."""
    text = render(key, order["language"], texts, order=order["id"], **values)
    return calls.send_message(int(order["user_id"]), text)


def payment_request(order: Mapping[str, Any], texts: Texts) -> QueuedCall:
    """The address, the amounts and the deadline, after approval."""
    lang = order["language"]
    text = render(
        "shop_pay",
        lang,
        texts,
        raw={"amounts": amounts(order, texts)},
        order=order["id"],
        network=network_name(order),
        address=to_base58(bytes(order["address"])),
        expires=when(order["expires_at"], order),
    )
    return calls.send_message(int(order["user_id"]), text)


def still_due(order: Mapping[str, Any], texts: Texts, key: str = "shop_still_due") -> QueuedCall:
    """What is left after a part payment (or a reminder of it), as exact amounts."""
    lang = order["language"]
    left = order["price_usdt"] - order["paid_usdt"]
    text = render(
        key,
        lang,
        texts,
        raw={"amounts": amounts(order, texts)},
        order=order["id"],
        left=show(left),
        due=when(order["due_at"], order),
    )
    return calls.send_message(int(order["user_id"]), text)


def requoted(order: Mapping[str, Any], texts: Texts) -> QueuedCall:
    """The TRX rate was quoted again: the new exact amounts."""
    text = render(
        "shop_requoted",
        order["language"],
        texts,
        raw={"amounts": amounts(order, texts)},
        order=order["id"],
        rate=show(order["usdt_per_trx"]),
    )
    return calls.send_message(int(order["user_id"]), text)


def held(order: Mapping[str, Any], transfer: Mapping[str, Any], texts: Texts) -> QueuedCall:
    """A real transfer that is not this order's exact amount: it waits for the owner."""
    text = render(
        "shop_held",
        order["language"],
        texts,
        raw={"amounts": amounts(order, texts)},
        hash=short(transfer["tx_hash"]),
        amount=show(transfer["amount"]),
        coin=transfer["coin"],
        order=order["id"],
    )
    return calls.send_message(int(order["user_id"]), text)


def refusal(
    order: Mapping[str, Any], tx_hash: str, reason: str, facts: Mapping[str, Any], texts: Texts
) -> QueuedCall:
    """Why a transaction does not count, as one sentence with the facts that explain it."""
    lang = order["language"]
    to = facts.get("to")
    because = render(
        f"shop_reason_{reason}",
        lang,
        texts,
        network=network_name(order),
        to=to_base58(to) if isinstance(to, bytes) else "?",
        address=to_base58(bytes(order["address"])) if order["address"] else "?",
        block_time=when(facts.get("block_time"), order),
    )
    text = render(
        "shop_payment_refused",
        lang,
        texts,
        raw={"reason": because},
        hash=short(tx_hash),
        order=order["id"],
    )
    return calls.send_message(int(order["user_id"]), text)
