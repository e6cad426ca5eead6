"""The doctor's look at a key rotation: what is still sealed with a key that is not the first.

SPONSORBOT_SECRET_KEY="new,old" seals with `new` and opens with either. The product moves
everything to `new` as it starts (bot tokens and the key check, TronGrid keys, authenticator
secrets); this check counts what is left under `old`, so the owner knows when dropping it is
safe. Recovery codes made by versions before they stopped depending on the key cannot be
moved; their members are counted, to be asked for new ones. Nothing here changes anything.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import asyncpg

from sponsorbot.config import installation_keys
from sponsorbot.engine.token_box import TokenBox
from sponsorbot.features.accounts.rotation import TOTP_SECRETS, keyed_recovery_codes
from sponsorbot.features.accounts.security import SEALED, PanelKeys
from sponsorbot.ops.doctor_local import Finding, Key, fail, ok, warn

CHECK = "sealed secrets"
BOT_TOKENS = "SELECT token_enc AS sealed FROM bots"
KEY_CHECK = "SELECT sealed FROM token_key_check"
TRONGRID_KEYS = "SELECT api_key AS sealed FROM shop_settings WHERE api_key IS NOT NULL"
# Members named in a line, at most: enough to act on, short enough to read.
NAMED = 5
NEW_CODES = 'have them press "Make new recovery codes" on their Account page'


@dataclass(slots=True)
class Tally:
    """One kind of sealed value: how many the first key opens, only an older one, none."""

    what: str
    first: int = 0
    older: int = 0
    unreadable: list[str] = field(default_factory=list)

    def count(self, n: int) -> str:
        """`n` of this kind, in words."""
        return f"{n} {self.what}" if n != 1 else f"1 {self.what.removesuffix('s')}"


@dataclass(frozen=True, slots=True)
class Keys:
    """The configured keys, as the product's boxes: all of them, and the first alone."""

    tokens: TokenBox
    first_tokens: TokenBox
    panel: PanelKeys
    first_panel: PanelKeys

    @classmethod
    def of(cls, secret: bytes) -> Keys:
        """The boxes of SPONSORBOT_SECRET_KEY (one key, or a rotation's list)."""
        first = installation_keys(secret)[0]
        return cls(TokenBox(secret), TokenBox(first), PanelKeys(secret), PanelKeys(first))

    def tally(self, what: str, values: Iterable[bytes]) -> Tally:
        """Bot tokens, the key check, TronGrid keys: sealed like bot tokens."""
        tally = Tally(what)
        for sealed in values:
            if self.first_tokens.opens(sealed):
                tally.first += 1
            elif self.tokens.opens(sealed):
                tally.older += 1
            else:
                tally.unreadable.append("")
        return tally

    def tally_totp(self, rows: Iterable[asyncpg.Record]) -> Tally:
        """Authenticator secrets; one kept in clear from before counts as not moved yet."""
        tally = Tally("authenticator secrets")
        for row in rows:
            stored = row["totp_secret"]
            if stored.startswith(SEALED) and self.first_panel.is_sealed(stored):
                tally.first += 1
            elif self.panel.open(stored) is not None:
                tally.older += 1
            else:
                tally.unreadable.append(row["email"])
        return tally


async def check_sealed(conn: asyncpg.Connection, key: Key) -> Finding | None:
    """The line about what an older key still holds, or None when there is nothing to say
    (one key, everything sealed with it). Bot tokens no key opens are the bot lines' FAIL."""
    if key.secret is None or key.problem is not None:
        return None
    keys = Keys.of(key.secret)
    try:
        tokens = keys.tally(
            "bot tokens", [bytes(r["sealed"]) for r in await conn.fetch(BOT_TOKENS)]
        )
        check = keys.tally("key checks", [bytes(r["sealed"]) for r in await conn.fetch(KEY_CHECK)])
        trongrid = keys.tally(
            "TronGrid keys", [bytes(r["sealed"]) for r in await conn.fetch(TRONGRID_KEYS)]
        )
        totp = keys.tally_totp(await conn.fetch(TOTP_SECRETS))
        members, codes = await keyed_recovery_codes(conn)
    except (asyncpg.UndefinedTableError, asyncpg.UndefinedColumnError):
        return None  # the migrations line says what to do
    lost = _unreadable(trongrid, totp)
    if lost:
        return fail(CHECK, lost)
    recovery = (
        f"{members} member(s) hold {codes} recovery code(s) made by an older Sponsorbot under "
        "the installation key: no rotation can move them, and they stop working once the key "
        f"they were made under is dropped; {NEW_CODES}"
        if members
        else ""
    )
    kinds = (tokens, trongrid, totp)
    if not keys.tokens.rotating:
        return warn(CHECK, recovery) if recovery else None
    older = [t.count(t.older) for t in kinds if t.older]
    if older or check.older:
        left = ", ".join(older) if older else "the key check"
        return warn(
            CHECK,
            f"still sealed with an older key: {left}; start the api and every worker with "
            "this SPONSORBOT_SECRET_KEY (they seal everything again as they start), then run "
            "the doctor again; keep the old key until then"
            + (f"; and {recovery}" if recovery else ""),
        )
    if recovery:
        return warn(CHECK, f"keep the old key for now: {recovery}")
    moved = ", ".join(t.count(t.first) for t in kinds)
    return ok(
        CHECK,
        f"everything is sealed with the first key ({moved}): it is safe to drop the old key "
        "from SPONSORBOT_SECRET_KEY and start again",
    )


def _unreadable(trongrid: Tally, totp: Tally) -> str:
    """What no configured key opens, and what to do about it; empty when nothing."""
    parts = []
    if totp.unreadable:
        names = ", ".join(totp.unreadable[:NAMED]) + (", …" if len(totp.unreadable) > NAMED else "")
        parts.append(
            f"{totp.count(len(totp.unreadable))} open with no key in SPONSORBOT_SECRET_KEY, so "
            f"those members cannot use two-step sign-in ({names}): list the old key again "
            "after the new one, or run `sponsorbot reset-link EMAIL --two-step-off` for each"
        )
    if trongrid.unreadable:
        parts.append(
            f"{trongrid.count(len(trongrid.unreadable))} open with no key in "
            "SPONSORBOT_SECRET_KEY: list the old key again after the new one, or enter them "
            "again in each bot's shop settings"
        )
    return "; ".join(parts)
