"""Engine hardening: polling conflicts and restarts, atomic webhooks, unreadable tokens, the
installation key's check, webhook lookups, supervised background loops, poison batches."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from sponsorbot.engine import inbox, notify
from sponsorbot.engine import poller as poller_module
from sponsorbot.engine.bots import (
    ActiveBot,
    BotLink,
    BotService,
    KeyMismatch,
    WebhookRefused,
)
from sponsorbot.engine.intake import Intake
from sponsorbot.engine.leases import Leases
from sponsorbot.engine.manager import BotManager
from sponsorbot.engine.notify import Notifier
from sponsorbot.engine.poller import Poller
from sponsorbot.engine.token_box import TokenBox
from sponsorbot.engine.unit import BotInfo
from sponsorbot.telegram import BotApi
from tests.kit import SECRET, Telegram, eventually, simulated_telegram

OTHER_KEY = "another-installation-key-that-is-long-enough-0987"


@contextlib.asynccontextmanager
async def telegram_and_service(pool: asyncpg.Pool) -> AsyncIterator[tuple[Telegram, BotService]]:
    """The simulator, and the engine's bot service on it (polling: no public URL)."""
    async with simulated_telegram() as tg:
        api = BotApi(tg.url)
        try:
            yield tg, BotService(pool, api, TokenBox(SECRET.encode()), None)
        finally:
            await api.close()


@contextlib.asynccontextmanager
async def polling(
    service: BotService, bot: dict[str, Any], **options: Any
) -> AsyncIterator[Poller]:
    """A poller of the bot, running until the block ends."""

    async def refused(_bot_id: int) -> None:
        return None

    active = ActiveBot(BotInfo(bot["id"], bot["username"], "polling", "active"), bot["token"])
    link = BotLink(service.pool, active, service.api, Notifier(), refused)
    poller = Poller(link, poll_timeout_s=1, **options)
    lost = asyncio.Event()
    task = asyncio.create_task(poller.run(lost))
    try:
        yield poller
    finally:
        lost.set()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_a_second_poller_of_the_token_shows_a_conflict_and_is_backed_off_from(
    pool: asyncpg.Pool,
) -> None:
    """M8: 409 "terminated by other getUpdates" is a conflict (shown), with growing pauses."""
    async with telegram_and_service(pool) as (tg, service):
        bot = await tg.sim.create_bot("twice_polled_bot")
        await service.add(bot["token"], "polling")
        intruder = service.api.bot(bot["token"])
        async with polling(service, bot) as poller:
            await asyncio.sleep(0.3)
            for _ in range(30):
                with contextlib.suppress(Exception):
                    await intruder.get_updates(timeout=0)
                await asyncio.sleep(0.1)
            problem = await pool.fetchval("SELECT problem FROM bots")
            backoff = poller._conflict_backoff
    assert problem == "conflict"
    assert backoff >= 4


async def test_a_webhook_set_again_is_not_deleted_again_at_once(
    pool: asyncpg.Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """M8: a webhook is deleted to poll once; set again (someone else's), it stays, shown."""
    monkeypatch.setattr(poller_module, "_webhook_deleted_at", {})
    async with telegram_and_service(pool) as (tg, service):
        bot = await tg.sim.create_bot("hooked_bot")
        await service.add(bot["token"], "polling")
        other = service.api.bot(bot["token"])
        await other.set_webhook("https://elsewhere.example/hook")
        async with polling(service, bot):

            async def deleted() -> bool:
                return bool((await other.get_webhook_info())["url"] == "")

            await eventually(deleted)
            await other.set_webhook("https://elsewhere.example/hook")

            async def shown() -> bool:
                return bool(await pool.fetchval("SELECT problem FROM bots") == "conflict")

            await eventually(shown)
            await asyncio.sleep(1.5)
            still_set = (await other.get_webhook_info())["url"]
    assert still_set == "https://elsewhere.example/hook"


async def test_after_a_week_idle_a_poll_takes_updates_below_the_stored_offset(
    pool: asyncpg.Pool,
) -> None:
    """M9: ids restarted below the offset after a week idle are polled and stored, not lost."""
    async with telegram_and_service(pool) as (tg, service):
        bot = await tg.sim.create_bot("idle_bot")
        user = await tg.sim.create_user("Ida")
        await service.add(bot["token"], "polling")
        await pool.execute(
            "UPDATE bots SET poll_offset = 900000000, last_update_at = now() - interval '7 days'"
        )
        await tg.sim.send_text(user["id"], "idle_bot", "after a quiet week")
        async with polling(service, bot):

            async def stored() -> bool:
                return bool(await pool.fetchval("SELECT count(*) FROM inbox"))

            await eventually(stored)
            await asyncio.sleep(0.2)
        row = await pool.fetchrow(
            "SELECT poll_offset, last_update_at > now() - interval '1 minute' AS fresh FROM bots"
        )
    assert row["poll_offset"] < 900000000
    assert row["fresh"]


async def test_an_old_finished_row_does_not_swallow_a_new_update_with_its_id(
    pool: asyncpg.Pool,
) -> None:
    """M9: dedupe drops a redelivery, not a new update that reuses an old row's id."""
    async with telegram_and_service(pool) as (tg, service):
        bot = await tg.sim.create_bot("reuse_bot")
        await service.add(bot["token"], "polling")
    bot_id = bot["id"]
    update = {"update_id": 5, "message": {"from": {"id": 9}, "chat": {"id": 9}, "text": "new"}}
    await pool.execute(
        "INSERT INTO inbox (bot_id, update_id, kind, chat_key, payload, status, received_at)"
        " VALUES ($1, 5, 'message', 9, '{}', 'dead', now() - interval '8 days'),"
        " ($1, 6, 'message', 9, '{}', 'done', now() - interval '1 hour')",
        bot_id,
    )
    assert await inbox.store_update(pool, bot_id, update)
    assert not await inbox.store_update(pool, bot_id, update | {"update_id": 6})
    rows = await pool.fetch("SELECT update_id, status FROM inbox ORDER BY update_id")
    assert [(r["update_id"], r["status"]) for r in rows] == [(5, "pending"), (6, "done")]
    # The reused row queues behind the person's earlier updates (the claim goes by id).
    ids = {r["update_id"]: r["id"] for r in await pool.fetch("SELECT id, update_id FROM inbox")}
    assert ids[5] > ids[6]


async def test_a_refused_webhook_stores_no_bot_and_a_refused_mode_change_keeps_the_old(
    pool: asyncpg.Pool,
) -> None:
    """M10: Telegram refusing setWebhook leaves nothing stored as webhook; a clear error."""
    async with telegram_and_service(pool) as (tg, service):
        bot = await tg.sim.create_bot("refused_hook_bot")
        service.public_url = "ftp://not-a-webhook.example"
        with pytest.raises(WebhookRefused, match="Telegram refused the webhook"):
            await service.add(bot["token"], "webhook")
        assert await pool.fetchval("SELECT count(*) FROM bots") == 0
        added = await service.add(bot["token"], "polling")
        before = await pool.fetchrow("SELECT mode, webhook_secret_hash FROM bots")
        with pytest.raises(WebhookRefused):
            await service.set_mode(added["id"], "webhook")
        after = await pool.fetchrow("SELECT mode, webhook_secret_hash FROM bots")
    assert before == after
    assert after["mode"] == "polling"


async def test_an_unreadable_token_marks_its_bot_and_the_others_are_served(
    pool: asyncpg.Pool,
) -> None:
    """M11: one token the key cannot open leaves out that bot (token_unreadable), not all."""
    async with telegram_and_service(pool) as (tg, service):
        good = await tg.sim.create_bot("good_key_bot")
        bad = await tg.sim.create_bot("bad_key_bot")
        await service.add(good["token"], "polling")
        await service.add(bad["token"], "polling")
        stranger = TokenBox(OTHER_KEY.encode())
        await pool.execute(
            "UPDATE bots SET token_enc = $2 WHERE id = $1", bad["id"], stranger.seal(bad["token"])
        )
        served = await service.active()
        marked = await service.get(bad["id"])
        # The right key is back: the mark goes by itself.
        await pool.execute(
            "UPDATE bots SET token_enc = $2 WHERE id = $1",
            bad["id"],
            service.box.seal(bad["token"]),
        )
        again = await service.active()
        cleared = await service.get(bad["id"])
    assert [b.info.id for b in served] == [good["id"]]
    assert marked["problem"] == "token_unreadable"
    assert sorted(b.info.id for b in again) == sorted([good["id"], bad["id"]])
    assert cleared["problem"] is None


async def test_a_wrong_key_refuses_to_start_and_new_comma_old_rotates(pool: asyncpg.Pool) -> None:
    """M11, L4: the key check refuses a different key; "new,old" seals everything anew."""
    async with telegram_and_service(pool) as (tg, service):
        bot = await tg.sim.create_bot("keyed_bot")
        await service.add(bot["token"], "polling")
        await service.check_key()
        assert await pool.fetchval("SELECT count(*) FROM token_key_check") == 1
        wrong = BotService(pool, service.api, TokenBox(OTHER_KEY.encode()), None)
        with pytest.raises(KeyMismatch, match="does not match"):
            await wrong.check_key()
        both = f"{OTHER_KEY},{SECRET}".encode()
        rotating = BotService(pool, service.api, TokenBox(both), None)
        await rotating.check_key()
        new_only = BotService(pool, service.api, TokenBox(OTHER_KEY.encode()), None)
        await new_only.check_key()
        assert await new_only.token(bot["id"]) == bot["token"]
        with pytest.raises(KeyMismatch):
            await service.check_key()


async def test_a_first_start_with_a_key_that_opens_no_stored_token_is_refused(
    pool: asyncpg.Pool,
) -> None:
    """M11: before any check value exists, stored tokens decide whether the key is right."""
    async with telegram_and_service(pool) as (tg, service):
        bot = await tg.sim.create_bot("early_bot")
        await service.add(bot["token"], "polling")
        wrong = BotService(pool, service.api, TokenBox(OTHER_KEY.encode()), None)
        with pytest.raises(KeyMismatch):
            await wrong.check_key()
    assert await pool.fetchval("SELECT count(*) FROM token_key_check") == 0


class _FailingOnce(BotService):
    """A bot service whose first load breaks in a way no database error covers."""

    calls = 0

    async def active(self) -> list[ActiveBot]:
        self.calls += 1
        if self.calls == 1:
            raise ValueError("something unforeseen")
        return await super().active()


async def test_the_manager_loop_logs_an_unforeseen_error_and_carries_on(
    pool: asyncpg.Pool, caplog: pytest.LogCaptureFixture
) -> None:
    """M11: an exception in a refresh is logged; the loop keeps refreshing."""
    api = BotApi("http://127.0.0.1:9")
    service = _FailingOnce(pool, api, TokenBox(SECRET.encode()), None)
    notifier = Notifier()
    manager = BotManager(pool, api, service, Leases(pool, "me"), notifier)
    stop = asyncio.Event()
    task = asyncio.create_task(manager.run(stop))
    try:

        async def refreshed_again() -> bool:
            notifier.wake("bots")
            return service.calls >= 2

        await eventually(refreshed_again)
    finally:
        stop.set()
        notifier.wake("bots")
        await task
        await api.close()
    assert "refreshing the bots failed" in caplog.text


class CountingPool:
    """The test's real pool, counting the lookups made through it."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool
        self.lookups = 0

    async def fetchrow(self, *args: Any) -> Any:
        self.lookups += 1
        return await self.pool.fetchrow(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.pool, name)


async def test_webhook_lookups_are_bounded_and_inactive_bots_updates_dropped(
    pool: asyncpg.Pool,
) -> None:
    """L2: a misshapen path costs no query, an unknown one one, a wrong secret at most one
    more a second; a paused bot's update is answered 200 and not stored."""
    path = "A" * 32
    await pool.execute(
        "INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path,"
        " webhook_secret_hash) VALUES (77, 'hook_bot', '', 'xxxx', 'webhook', $1, $2)",
        path,
        hashlib.sha256(b"right").digest(),
    )
    counting = CountingPool(pool)
    intake = Intake(counting, Notifier())
    body = b'{"update_id": 1, "message": {"from": {"id": 5}, "chat": {"id": 5}}}'

    async def read(_limit: int) -> bytes:
        return body

    misshapen = [await intake.accept(p, b"right", read) for p in ("x", "../../a", "A" * 33)]
    assert [status for status, _ in misshapen] == [404, 404, 404]
    assert counting.lookups == 0
    for _ in range(3):
        assert (await intake.accept("B" * 32, b"right", read))[0] == 404
    assert counting.lookups == 1
    for _ in range(5):
        assert (await intake.accept(path, b"wrong", read))[0] == 401
    assert counting.lookups <= 3
    assert (await intake.accept(path, b"right", read))[0] == 200
    assert await pool.fetchval("SELECT count(*) FROM inbox") == 1
    await pool.execute("UPDATE bots SET status = 'paused'")
    intake = Intake(counting, Notifier())
    answer = await intake.accept(path, b"right", lambda _n: _body(body, 2))
    assert answer[0] == 200
    assert await pool.fetchval("SELECT count(*) FROM inbox") == 1


async def _body(body: bytes, update_id: int) -> bytes:
    return body.replace(b'"update_id": 1', f'"update_id": {update_id}'.encode())


class _BrokenRenewal(Leases):
    """Leases whose renewals fail with something no database error covers."""

    renewals = 0

    async def acquire(self, name: str, duration_s: float | None = None) -> bool:
        self.renewals += 1
        if self.renewals > 1:
            raise RuntimeError("unforeseen")
        return await super().acquire(name, duration_s)


async def test_an_unforeseen_renewal_error_loses_the_lease_instead_of_ending_quietly(
    pool: asyncpg.Pool, caplog: pytest.LogCaptureFixture
) -> None:
    """L6: renewal logs any exception and sets `lost`; the holder stops."""
    leases = _BrokenRenewal(pool, "me", duration_s=0.3)
    assert await leases.acquire("send:1")
    lost = asyncio.Event()
    async with leases.kept("send:1", lost):
        await asyncio.wait_for(lost.wait(), timeout=3)
    assert "renewing lease send:1 failed" in caplog.text


async def test_the_listener_comes_back_after_add_listener_fails(
    pool: asyncpg.Pool, db_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """L6: an error in add_listener is logged and listening starts again (with backoff)."""
    monkeypatch.setattr(notify, "LISTEN_BACKOFF_S", 0.05)
    real = asyncpg.Connection.add_listener
    failures: list[str] = []

    async def failing_once(self: asyncpg.Connection, channel: str, callback: Any) -> None:
        if not failures:
            failures.append(channel)
            raise asyncpg.InterfaceError("the connection broke while listening")
        await real(self, channel, callback)

    monkeypatch.setattr(asyncpg.Connection, "add_listener", failing_once)
    hearer = Notifier(pool, db_dsn)
    teller = Notifier(pool, db_dsn)
    listening = asyncio.create_task(hearer.listen())
    try:

        async def heard() -> bool:
            teller.wake("ping")
            return await hearer.wait("ping", 0.2)

        await eventually(heard, timeout=10)
    finally:
        listening.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await listening
        await hearer.close()
        await teller.close()
    assert failures == [notify.CHANNEL]


async def test_an_update_postgresql_cannot_store_is_quarantined_and_polling_moves_on(
    pool: asyncpg.Pool, caplog: pytest.LogCaptureFixture
) -> None:
    """L7: a poison batch is stored one by one; the NUL update is kept dead with a reason."""
    caplog.set_level(logging.WARNING)
    async with telegram_and_service(pool) as (tg, service):
        bot = await tg.sim.create_bot("poison_bot")
        user = await tg.sim.create_user("Pat")
        # Telegram cleans a NUL out of a message's text (so does the simulator); a person made
        # through the control API keeps one in their name, and every update of theirs has it.
        poison = await tg.sim.create_user("nul \x00 inside")
        await service.add(bot["token"], "polling")
        await tg.sim.send_text(user["id"], "poison_bot", "fine")
        await tg.sim.send_text(poison["id"], "poison_bot", "poison")
        await tg.sim.send_text(user["id"], "poison_bot", "fine again")
        async with polling(service, bot):

            async def all_three() -> bool:
                return bool(await pool.fetchval("SELECT count(*) FROM inbox") == 3)

            await eventually(all_three)
        rows = await pool.fetch(
            "SELECT status, error, payload->'message'->>'text' AS text"
            " FROM inbox ORDER BY update_id"
        )
        offset = await pool.fetchval("SELECT poll_offset FROM bots")
    assert [(r["status"], r["text"]) for r in rows] == [
        ("pending", "fine"),
        ("dead", "poison"),
        ("pending", "fine again"),
    ]
    assert rows[1]["error"].startswith("quarantined")
    assert offset > 0


async def test_a_refused_token_in_a_membership_check_is_no_verdict_about_the_channel(
    pool: asyncpg.Pool,
) -> None:
    """L17: a 401 while checking membership propagates (the bot must stop), not Unknown."""
    from sponsorbot.features.botconfig import GateChannel
    from sponsorbot.features.gate.membership import MembershipCache, check_all
    from sponsorbot.telegram import Unauthorized

    async with simulated_telegram() as tg:
        bot = await tg.sim.create_bot("gone_bot")
        user = await tg.sim.create_user("Gus")
        channel = await tg.sim.create_channel("Gated", username="gated_channel")
        await tg.sim.revoke_token("gone_bot")
        api = BotApi(tg.url)
        try:
            gate = [GateChannel(channel["id"], "Gated", "gated_channel", None, False, False)]
            with pytest.raises(Unauthorized):
                await check_all(api.bot(bot["token"]), MembershipCache(), 1, user["id"], gate)
        finally:
            await api.close()


@contextlib.asynccontextmanager
async def migrating_telegram(new_chat: int) -> AsyncIterator[tuple[str, list[int]]]:
    """A Bot API that answers the first upload with "the group is now a supergroup"."""
    from aiohttp import web

    chats: list[int] = []

    async def send_document(request: web.Request) -> web.Response:
        form = await request.post()
        chats.append(int(str(form["chat_id"])))
        if len(chats) == 1:
            return web.json_response(
                {
                    "ok": False,
                    "error_code": 400,
                    "description": "Bad Request: group chat was upgraded to a supergroup chat",
                    "parameters": {"migrate_to_chat_id": new_chat},
                },
                status=400,
            )
        message = {"message_id": 1, "document": {"file_id": "BQACAgIAAxkBAAIBZ2Z"}}
        return web.json_response({"ok": True, "result": message})

    app = web.Application()
    app.router.add_post("/bot{token}/sendDocument", send_document)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}", chats
    finally:
        await runner.cleanup()


async def test_an_upload_follows_a_storage_group_that_became_a_supergroup(
    pool: asyncpg.Pool,
) -> None:
    """L17: migrate_to_chat_id: the upload is tried once in the new chat, which is kept."""
    from sponsorbot.features.content.service import MOVE_STORAGE, store_file

    await pool.execute(
        "INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path,"
        " webhook_secret_hash) VALUES (88, 'store_bot', '', 'xxxx', 'polling', 'p', '')"
    )
    await pool.execute("INSERT INTO bot_settings (bot_id, storage_chat_id) VALUES (88, -100)")

    async def moved(old: int, new: int) -> None:
        await pool.execute(MOVE_STORAGE, 88, old, new)

    async with migrating_telegram(-1001234) as (url, chats):
        api = BotApi(url)
        try:
            item = await store_file(
                api.bot("123456:" + "A" * 35), -100, "document", "a.txt", b"x", "text/plain", moved
            )
        finally:
            await api.close()
    assert chats == [-100, -1001234]
    assert item == {"kind": "document", "file_id": "BQACAgIAAxkBAAIBZ2Z"}
    assert await pool.fetchval("SELECT storage_chat_id FROM bot_settings") == -1001234


def test_the_embedded_servers_socket_outside_pgdata_is_private(tmp_path: Path) -> None:
    """L5: a data dir too long for a socket puts it elsewhere; that directory is made 0700."""
    from sponsorbot.db.embedded import EmbeddedPostgres

    deep = tmp_path / ("long-" * 20)
    server = EmbeddedPostgres(deep)
    uri = server.start()
    try:
        socket_dir = Path(uri.split("host=", 1)[1])
        mode = socket_dir.stat().st_mode & 0o777
    finally:
        server.release()
    assert socket_dir != server.pgdata
    assert mode == 0o700
