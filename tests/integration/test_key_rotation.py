"""A key rotation on a real database: SPONSORBOT_SECRET_KEY goes from `old` to `new,old`, the
product starts (the engine's key check, then the features' jobs), and `old` is dropped.

Nothing is lost on the way: bot tokens, TronGrid keys and authenticator secrets are all sealed
with `new` at start, recovery codes never depended on the key, and the doctor says what is left
under `old` until nothing is, then that dropping it is safe.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from sponsorbot.config import Settings
from sponsorbot.engine.bots import BotService
from sponsorbot.engine.core import Engine
from sponsorbot.engine.token_box import TokenBox
from sponsorbot.features.accounts import users as accounts
from sponsorbot.features.accounts.security import PanelKeys, derive_key, recovery_codes
from sponsorbot.features.all import install
from sponsorbot.ops.doctor import Finding, run_doctor
from sponsorbot.telegram import BotApi
from tests.integration.panel_kit import Clock
from tests.integration.twostepkit import (
    OFFLINE,
    keyed_panel,
    run_jobs,
    signs_in,
    turn_on_two_step,
)
from tests.kit import Telegram, make_settings, simulated_telegram

OLD = "the-old-installation-key-that-is-long-enough-1234567890"
NEW = "the-new-installation-key-that-is-long-enough-0987654321"
ROTATING = f"{NEW},{OLD}"
TRONGRID_KEY = "a-trongrid-api-key-0000-1111-2222"
SHOP_KEY = "INSERT INTO shop_settings (bot_id, api_key) VALUES ($1, $2)"
SEALED = "sealed secrets"


@contextlib.asynccontextmanager
async def installation(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> AsyncIterator[tuple[Telegram, Settings]]:
    """A bot, its shop's TronGrid key and the key check, all sealed with `old`."""
    async with simulated_telegram() as tg:
        api = BotApi(tg.url)
        try:
            service = BotService(pool, api, TokenBox(OLD.encode()), None)
            bot = await service.add(
                str((await tg.sim.create_bot("rotate_bot"))["token"]), "polling"
            )
            await service.check_key()
        finally:
            await api.close()
        await pool.execute(SHOP_KEY, bot["id"], TokenBox(OLD.encode()).seal(TRONGRID_KEY))
        offline = OFFLINE | {"telegram_api": tg.url, "secret_key": OLD}
        yield tg, make_settings(db_dsn, tg.url, tmp_path, **offline)


async def doctor(settings: Settings, secret_key: str) -> dict[str, Finding]:
    """The doctor's lines by check, run with this SPONSORBOT_SECRET_KEY."""
    changed = Settings(**(settings.model_dump() | {"secret_key": secret_key}))
    return {f.check: f for f in await run_doctor(changed, lambda _: None)}


async def start(settings: Settings, pool: asyncpg.Pool, db_dsn: str, key: str) -> None:
    """What `sponsorbot run` does with this key until its first jobs have run: the key check
    (bot tokens move), the features, one round of the scheduler (their jobs move the rest)."""
    changed = Settings(**(settings.model_dump() | {"secret_key": key}))
    engine = Engine(changed, pool, db_dsn)
    try:
        await engine.bots.check_key()
        install(engine)
        await run_jobs(engine, "accounts_reseal", "shop_reseal")
    finally:
        await engine.close()


def _stored_under(key: str, stored: str) -> bool:
    return PanelKeys(key.encode()).open(stored) is not None


async def test_a_rotation_keeps_two_step_and_recovery_codes_and_the_doctor_follows_it(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    clock = Clock()
    async with installation(pool, db_dsn, tmp_path) as (_, settings):
        async with keyed_panel(pool, db_dsn, tmp_path, OLD, clock) as panel:
            member = await turn_on_two_step(panel)
        assert SEALED not in await doctor(settings, OLD), "one key: nothing to say"

        before = await doctor(settings, ROTATING)
        assert before[SEALED].level == "warn", before[SEALED].line()
        for what in ("1 bot token", "1 TronGrid key", "1 authenticator secret"):
            assert what in before[SEALED].detail
        assert "keep the old key" in before[SEALED].detail

        await start(settings, pool, db_dsn, ROTATING)
        stored = await pool.fetchval("SELECT totp_secret FROM users")
        assert _stored_under(NEW, stored) and not _stored_under(OLD, stored)
        api_key = await pool.fetchval("SELECT api_key FROM shop_settings")
        assert TokenBox(NEW.encode()).open(api_key) == TRONGRID_KEY
        after = await doctor(settings, ROTATING)
        assert after[SEALED].level == "ok", after[SEALED].line()
        assert "it is safe to drop the old key" in after[SEALED].detail

        dropped = await doctor(settings, NEW)
        assert SEALED not in dropped
        assert {f.level for check, f in dropped.items() if check != "disk"} == {"ok"}, [
            f.line() for f in dropped.values()
        ]
        async with keyed_panel(pool, db_dsn, tmp_path, NEW, clock) as panel:
            assert await signs_in(panel, member.email, None, member.secret)
            assert await signs_in(panel, member.email, member.codes[0])
            assert not await signs_in(panel, member.email, member.codes[0]), "used up"


async def test_codes_made_before_they_left_the_key_work_while_it_is_listed_and_are_reported(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """Recovery codes an older version kept as an HMAC under the key cannot move: they keep
    working while their key is listed, and the doctor asks for new ones until there are."""
    clock = Clock()
    async with installation(pool, db_dsn, tmp_path) as (_, settings):
        async with keyed_panel(pool, db_dsn, tmp_path, OLD, clock) as panel:
            member = await turn_on_two_step(panel)
        under_old = derive_key(OLD.encode(), "panel-recovery-codes")
        old_codes = recovery_codes()[:2]
        digests = [hmac.new(under_old, c.encode(), hashlib.sha256).digest() for c in old_codes]
        user_id = await pool.fetchval("SELECT id FROM users")
        await accounts.replace_recovery_codes(pool, user_id, digests)

        alone = await doctor(settings, OLD)
        assert alone[SEALED].level == "warn"
        assert "1 member(s) hold 2 recovery code(s) made by an older Sponsorbot" in (
            alone[SEALED].detail
        )
        assert "Make new recovery codes" in alone[SEALED].detail

        await start(settings, pool, db_dsn, ROTATING)
        rotating = await doctor(settings, ROTATING)
        assert rotating[SEALED].level == "warn"
        assert rotating[SEALED].detail.startswith("keep the old key for now: 1 member(s)")
        async with keyed_panel(pool, db_dsn, tmp_path, ROTATING, clock) as panel:
            assert await signs_in(panel, member.email, old_codes[0].lower())
            assert await signs_in(panel, member.email, None, member.secret)

        fresh = recovery_codes()
        keys = PanelKeys(ROTATING.encode())
        await accounts.replace_recovery_codes(
            pool, user_id, [keys.recovery_digest(c) for c in fresh]
        )
        assert (await doctor(settings, ROTATING))[SEALED].level == "ok"
        async with keyed_panel(pool, db_dsn, tmp_path, NEW, clock) as panel:
            assert not await signs_in(panel, member.email, old_codes[1]), "replaced"
            assert await signs_in(panel, member.email, fresh[0])


async def test_a_secret_no_listed_key_opens_is_a_fail_naming_the_member(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """The old key dropped before the workers started with `new,old`: the doctor names who is
    locked out of two-step and the way back."""
    clock = Clock()
    async with installation(pool, db_dsn, tmp_path) as (_, settings):
        async with keyed_panel(pool, db_dsn, tmp_path, OLD, clock) as panel:
            member = await turn_on_two_step(panel)
        token_box = TokenBox(NEW.encode())
        await pool.execute("UPDATE token_key_check SET sealed = $1", token_box.seal("check"))
        found = await doctor(settings, NEW)
        assert found[SEALED].level == "FAIL"
        assert member.email in found[SEALED].detail
        assert "1 authenticator secret open with no key" in found[SEALED].detail
        assert "1 TronGrid key open with no key" in found[SEALED].detail
        assert "sponsorbot reset-link EMAIL --two-step-off" in found[SEALED].detail


@pytest.mark.parametrize("key", [OLD, ROTATING])
def test_new_recovery_codes_do_not_depend_on_the_key(key: str) -> None:
    """The digest kept of a new code is the same whatever the key, so no rotation voids it."""
    code = recovery_codes()[0]
    assert PanelKeys(key.encode()).recovery_digest(code) == PanelKeys(None).recovery_digest(code)
    assert PanelKeys(NEW.encode()).recovery_digest(code) in PanelKeys(
        key.encode()
    ).recovery_candidates(code.lower())
