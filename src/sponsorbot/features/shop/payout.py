"""Where a shop's money goes: its payout address, its network and the coins it takes, and the
advertiser's texts that say where and how much to pay (docs/adr/0009-payout-owner.md).

Only the owner changes them (the `shop.money` permission of
features/accounts/permissions.py). Every change is audited as `shop.money_changed` (the
address only by its tail) or, for the texts, `shop.money_changed.texts` (texts in full: they
are not secret), and the dashboard lists the changes of the last week, so a shop redirected to
someone else's wallet does not go unnoticed.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

import asyncpg

from sponsorbot.features.accounts.audit import AuditFilter, entries
from sponsorbot.features.shop.settings import ShopConfig, ShopSettings
from sponsorbot.features.texts import LANGUAGES, placeholders
from sponsorbot.features.texts_shop import SHOP_TEXTS

MONEY_FIELDS = ("network", "address", "accept_usdt", "accept_trx")
MONEY_CHANGED = "shop.money_changed"
# A kind under MONEY_CHANGED, so the dashboard's notice (which matches kinds by prefix) and the
# audit page's filter list it too, with a label of its own.
MONEY_TEXTS_CHANGED = f"{MONEY_CHANGED}.texts"
# The texts that tell an advertiser where and how much to pay: those that show the shop's
# address or the amounts due, and the pieces the amounts are written with (shop/notices.py).
# Reworded, any of them could send payments to another wallet.
MONEY_TEXTS = frozenset(
    key for key, text in SHOP_TEXTS["en"].items() if placeholders(text) & {"address", "amounts"}
) | frozenset({"shop_amount_usdt", "shop_amount_trx", "shop_or"})
# How long the dashboard shows a change, and how many it lists at most.
NOTICE_FOR = timedelta(days=7)
NOTICE_LIMIT = 20
# Six characters, not a token's four: look-alike addresses made to match a wallet's first and
# last four characters are cheap to generate.
ADDRESS_TAIL = 6


def money_changes(stored: ShopSettings, new: ShopConfig) -> list[str]:
    """The money fields that saving `new` over `stored` (as ShopService.settings shows it)
    would change; empty when only other settings change, which any admin may do."""
    typed = {
        "network": new.network,
        "address": new.address.strip() or None,
        "accept_usdt": new.accept_usdt,
        "accept_trx": new.accept_trx,
    }
    return [k for k in MONEY_FIELDS if typed[k] != stored[k]]


def _money_view(settings: ShopSettings) -> dict[str, Any]:
    address = settings.address
    return {
        "network": settings.network,
        "address_tail": address[-ADDRESS_TAIL:] if address else None,
        "accept_usdt": settings.accept_usdt,
        "accept_trx": settings.accept_trx,
    }


def money_change(
    before: ShopSettings, after: ShopSettings
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The audit entry's before and after for a save from `before` to `after` (both as
    ShopService.settings shows them), or None when no money setting changed. Compared in full:
    a new address with the same tail is still a change."""
    if all(before[k] == after[k] for k in MONEY_FIELDS):
        return None
    return _money_view(before), _money_view(after)


Overrides = Mapping[str, Mapping[str, str]]


def money_text_changes(before: Overrides, after: Overrides) -> list[str]:
    """The money texts that `after` changes from `before` (overrides by language, as
    BotSettingsService.texts gives them; a missing text is the default), as `language.key`."""
    return [
        f"{language}.{key}"
        for language in LANGUAGES
        for key in sorted(MONEY_TEXTS)
        if before.get(language, {}).get(key) != after.get(language, {}).get(key)
    ]


def money_text_change(
    before: Overrides, after: Overrides
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The audit entry's before and after for a save of the texts from `before` to `after`:
    `{"texts": {"en.shop_pay": text or None (the default)}}` for each money text changed, or
    None when none was."""
    changed = money_text_changes(before, after)
    if not changed:
        return None

    def pick(overrides: Overrides) -> dict[str, Any]:
        texts = {}
        for field in changed:
            language, key = field.split(".")
            texts[field] = overrides.get(language, {}).get(key)
        return {"texts": texts}

    return pick(before), pick(after)


async def recent_money_changes(pool: asyncpg.Pool, now: datetime) -> list[dict[str, Any]]:
    """The money changes of the last week, newest first (what the dashboard warns about)."""
    return await entries(
        pool, AuditFilter(kind=MONEY_CHANGED, since=now - NOTICE_FOR), NOTICE_LIMIT
    )
