"""Broadcasts in the panel over HTTP, with the worker running on the simulator: the form keeps
what was typed and shows Telegram's own error, the live audience count, send now and the
progress fragment up to the report, pause / resume / cancel, roles, previews to the member's
Telegram id, uploads."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from fastapi import FastAPI

from sponsorbot.db.database import Database
from sponsorbot.features.accounts.users import LockoutPolicy
from sponsorbot.features.all import install
from sponsorbot.features.broadcasts.service import Broadcast, Draft
from sponsorbot.web.app import create_app
from sponsorbot.web.deps import Services
from sponsorbot.web.panel import PanelConfig
from tests.integration.broadcastkit import FAST, POST, add_people
from tests.integration.panel_kit import add_member, client, csrf_of, sign_in
from tests.kit import Telegram, eventually, make_settings, running_engine, simulated_telegram

HX = {"HX-Request": "true"}
UPLOAD_LIMIT = 1024 * 1024


@dataclass
class Env:
    """The panel app over a running engine, with one bot whose audience started it."""

    app: FastAPI
    features: Services
    tg: Telegram
    bot: dict[str, Any]
    sim_bot: dict[str, Any]
    people: list[int]
    pool: asyncpg.Pool

    async def draft(self, title: str = "Weekly news") -> Broadcast:
        """A draft made through the service."""
        return await self.features.broadcasts.create(self.bot["id"], Draft(title, POST), "test")


@contextlib.asynccontextmanager
async def panel_env(
    pool: asyncpg.Pool, dsn: str, tmp_path: Path, people: int = 30, **settings: Any
) -> AsyncIterator[Env]:
    async with simulated_telegram() as tg:
        sim_bot = await tg.sim.create_bot("news_bot")
        config = make_settings(dsn, tg.url, tmp_path, **settings)
        async with running_engine(config, pool, dsn) as run:
            features = install(run.engine, options=FAST)
            panel = PanelConfig(
                lockout=LockoutPolicy(delay_step_s=0.0, max_delay_s=0.0), upload_limit=UPLOAD_LIMIT
            )
            app = create_app(config, Database(dsn, pool, None), features, panel)
            bot = await run.engine.bots.add(sim_bot["token"], "polling")
            audience = await add_people(tg.sim, pool, bot["id"], sim_bot["username"], people)
            yield Env(app, Services.of(features), tg, bot, sim_bot, audience, pool)


async def signed_in(env: Env, http: httpx.AsyncClient, role: str = "editor") -> str:
    await sign_in(http, await add_member(env.pool, role))
    return await csrf_of(http, "/broadcasts/new")


def form(env: Env, **fields: Any) -> dict[str, Any]:
    """The compose form as a browser posts it (fields override)."""
    values: dict[str, Any] = {
        "bot_id": str(env.bot["id"]),
        "title": "Weekly news",
        "text": "<b>News</b> of the week",
        "buttons": "Read | https://example.com/news ;; More | https://example.com/more",
        "media_kind": "",
        "file_id": "",
        "active_days": "",
        "language": "",
        "campaign_id": "",
        "scheduled_at": "",
        "action": "draft",
    }
    values.update(fields)
    return values


def location_id(answer: httpx.Response) -> int:
    assert answer.status_code == 303, answer.text[-2000:]
    return int(answer.headers["location"].rsplit("/", 1)[1])


async def kinds(pool: asyncpg.Pool, broadcast_id: int) -> list[str]:
    rows = await pool.fetch(
        "SELECT kind FROM audit_log WHERE target = $1 ORDER BY id", f"broadcast:{broadcast_id}"
    )
    return [r["kind"] for r in rows]


async def test_bad_input_keeps_the_form_and_shows_the_error_beside_the_field(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with panel_env(pool, db_dsn, tmp_path) as env, client(env.app) as http:
        csrf = await signed_in(env, http)
        empty = await http.get("/broadcasts")
        assert "No broadcasts yet" in empty.text and 'href="/broadcasts/new"' in empty.text
        cases: list[tuple[dict[str, Any], str, str]] = [
            (
                {"text": "<b>News</i> of the week"},
                "text",
                "Telegram refuses this text: Bad Request: can&#39;t parse entities: "
                "Unmatched end tag at byte offset 7",
            ),
            ({"text": "<blink>x</blink>"}, "text", "Unsupported start tag"),
            ({"text": "   "}, "text", "Telegram refuses this text: Bad Request:"),
            ({"buttons": "Read | htp//example.com"}, "buttons", "button “Read” is not a full"),
            ({"buttons": "Read https://example.com"}, "buttons", "Write each button as"),
            ({"title": " "}, "title", "title of 1 to 200 characters"),
            ({"bot_id": ""}, "bot_id", "Choose a bot from the list."),
            ({"bot_id": "999999"}, "bot_id", "Choose a bot from the list."),
            ({"active_days": "lots"}, "active_days", "A whole number of days"),
            ({"active_days": "5000"}, "active_days", "Active within 1 to 3650 days"),
            ({"media_kind": "photo"}, "file_id", "Give the media&#39;s Telegram file_id"),
            ({"action": "schedule"}, "scheduled_at", "Choose when to send it."),
            ({"action": "schedule", "scheduled_at": "soon"}, "scheduled_at", "like 2026-12-31"),
            (
                {"action": "schedule", "scheduled_at": "2020-01-01T10:00"},
                "scheduled_at",
                "The scheduled time is in the past",
            ),
        ]
        for fields, field, text in cases:
            values = form(env, **{"title": "Typed title", **fields})
            answer = await http.post("/broadcasts", data={"csrf": csrf, **values})
            assert answer.status_code == 422, (fields, answer.status_code)
            assert f'id="e-{field}"' in answer.text, (fields, answer.text[-3000:])
            assert text in answer.text, (fields, re.findall(r'class="error"[^<]*<', answer.text))
            if "title" not in fields:
                assert 'value="Typed title"' in answer.text, fields  # what was typed stays
            if "buttons" not in fields:
                assert "More | https://example.com/more</textarea>" in answer.text, fields
        assert await pool.fetchval("SELECT count(*) FROM broadcasts") == 0

        made = await http.post("/broadcasts", data={"csrf": csrf, **form(env)})
        broadcast_id = location_id(made)
        bot_id = env.bot["id"]
        detail = await http.get(f"/broadcasts/{bot_id}/{broadcast_id}")
        assert detail.status_code == 200 and "Draft" in detail.text
        assert re.search(r'id="post-text" dir="auto">News of the week<', detail.text)
        assert 'href="https://example.com/more"' in detail.text
        assert "hx-trigger" not in detail.text  # a draft does not move: nothing to poll

        edit = await http.get(f"/broadcasts/{bot_id}/{broadcast_id}/edit")
        assert 'value="Weekly news"' in edit.text
        assert "Read | https://example.com/news ;; More | https://example.com/more<" in edit.text
        changed = await http.post(
            f"/broadcasts/{bot_id}/{broadcast_id}/edit",
            data={"csrf": csrf, **form(env, title="Monthly news", silent="on")},
        )
        assert location_id(changed) == broadcast_id
        later = await http.post(
            f"/broadcasts/{bot_id}/{broadcast_id}/edit",
            data={
                "csrf": csrf,
                **form(
                    env,
                    title="Monthly news",
                    silent="on",
                    action="schedule",
                    scheduled_at="2099-01-01T10:00",
                ),
            },
        )
        assert location_id(later) == broadcast_id
        scheduled = await env.features.broadcasts.get(bot_id, broadcast_id)
        assert scheduled["status"] == "scheduled" and scheduled["title"] == "Monthly news"
        assert scheduled["post"]["silent"] is True
        page = await http.get(f"/broadcasts/{bot_id}/{broadcast_id}")
        assert "Scheduled for 2099-01-01 10:00" in page.text
        edit = await http.get(f"/broadcasts/{bot_id}/{broadcast_id}/edit")
        assert 'value="2099-01-01T10:00"' in edit.text

        gone = await http.post(f"/broadcasts/{bot_id}/{broadcast_id}/delete", data={"csrf": csrf})
        assert gone.status_code == 409 and "Only a draft can be deleted." in gone.text
        other = (await env.draft("Throwaway"))["id"]
        deleted = await http.post(f"/broadcasts/{bot_id}/{other}/delete", data={"csrf": csrf})
        assert deleted.status_code == 303 and deleted.headers["location"] == "/broadcasts"
        assert (await http.get(f"/broadcasts/{bot_id}/{other}")).status_code == 404
        huge = await http.get(f"/broadcasts/{bot_id}/" + "9" * 30)
        assert huge.status_code < 500
    assert await kinds(pool, broadcast_id) == [
        "broadcast.create",
        "broadcast.change",
        "broadcast.schedule",
    ]
    change = await pool.fetchrow(
        "SELECT before, after FROM audit_log WHERE kind = 'broadcast.change'"
    )
    assert change["before"]["title"] == "Weekly news" and change["after"]["title"] == "Monthly news"
    assert change["after"]["post"]["silent"] is True
    assert await kinds(pool, other) == ["broadcast.delete"]


async def test_the_audience_count_answers_the_form_as_filters_change(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with panel_env(pool, db_dsn, tmp_path, people=12) as env, client(env.app) as http:
        await add_people(env.tg.sim, pool, env.bot["id"], env.sim_bot["username"], 5, language="fa")
        await signed_in(env, http)
        new = await http.get("/broadcasts/new")
        assert 'hx-get="/broadcasts/audience"' in new.text and "change from:#audience" in new.text

        async def count(**query: str) -> str:
            answer = await http.get("/broadcasts/audience", params=query, headers=HX)
            assert answer.status_code == 200
            return answer.text.strip()

        bot = str(env.bot["id"])
        assert await count(bot_id=bot) == '<strong id="audience-n">17 people</strong>'
        assert "5 people" in await count(bot_id=bot, language="fa")
        assert "12 people" in await count(bot_id=bot, language="en", active_days="7")
        assert "0 people" in await count(bot_id=bot, passed="on")
        assert "Choose a bot to count" in await count()
        assert "A whole number of days" in await count(bot_id=bot, active_days="x")
        assert "Active within 1 to 3650 days" in await count(bot_id=bot, active_days="0")
        assert "Choose a bot from the list." in await count(bot_id="999999")
        # Opened as a page rather than by the form: the form itself.
        page = await http.get("/broadcasts/audience", params={"bot_id": bot})
        assert page.status_code == 303 and page.headers["location"] == "/broadcasts/new"


async def test_send_now_the_progress_fragment_reaches_100_and_shows_the_report(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with panel_env(pool, db_dsn, tmp_path) as env, client(env.app) as http:
        # Deleted accounts: Telegram says so only when sent to (a block would arrive as an
        # update first and take them out of the audience).
        for user in env.people[:3]:
            await env.tg.sim.deactivate_user(user)
        csrf = await signed_in(env, http)
        made = await http.post("/broadcasts", data={"csrf": csrf, **form(env, action="send")})
        broadcast_id = location_id(made)
        base = f"/broadcasts/{env.bot['id']}/{broadcast_id}"
        first = await http.get(f"{base}/progress", headers=HX)
        assert 'hx-trigger="every 2s"' in first.text and f'hx-get="{base}/progress"' in first.text
        assert "<html" not in first.text  # a fragment, swapped in place

        fragment = first
        for _attempt in range(150):
            fragment = await http.get(f"{base}/progress", headers=HX)
            if "Finished" in fragment.text:
                break
            await asyncio.sleep(0.2)
        text = fragment.text
        assert "Finished" in text and 'value="100.0"' in text and "30 of 30" in text
        assert "hx-trigger" not in text  # finished: the page stops asking
        assert re.search(r'id="sent">27<', text) and re.search(r'id="blocked">3<', text)
        assert re.search(r'id="failed">0<', text) and re.search(r'id="unknown">0<', text)
        assert "Forbidden: user is deactivated" in text
        assert "/pause" not in text and "/cancel" not in text

        detail = await http.get(base)
        assert 'id="live"' in detail.text and "Broadcast created" in detail.text
        assert "Sent now" in detail.text
        listed = await http.get("/broadcasts")
        assert "Weekly news" in listed.text and "Finished" in listed.text
        assert 'value="100.0"' in listed.text and "@news_bot" in listed.text
        cells = re.findall(
            r'data-label="(Delivered|Blocked the bot|Failed)">([^<]*)</td>', listed.text
        )
        assert cells == [("Delivered", "27"), ("Blocked the bot", "3"), ("Failed", "0")]
        done = await http.get("/broadcasts", params={"status": "done", "bot": env.bot["id"]})
        assert "Weekly news" in done.text
        drafts = await http.get("/broadcasts", params={"status": "draft"})
        assert "No broadcast matches these filters." in drafts.text

        again = await http.post(f"{base}/cancel", data={"csrf": csrf})
        assert again.status_code == 409
        assert "The broadcast is Finished: it cannot do that now." in again.text
        editing = await http.get(f"{base}/edit")
        assert (
            editing.status_code == 409 and "cannot be changed once it has started" in editing.text
        )
        page = await http.get(f"{base}/progress")  # not from htmx: the page itself
        assert page.status_code == 303 and page.headers["location"] == base
    assert await kinds(pool, broadcast_id) == ["broadcast.create", "broadcast.send"]


async def test_pause_resume_and_cancel_from_the_detail_page(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with (
        panel_env(pool, db_dsn, tmp_path, people=200, send_per_bot_per_s=10) as env,
        client(env.app) as http,
    ):
        csrf = await signed_in(env, http)
        service, bot_id = env.features.broadcasts, env.bot["id"]
        broadcast_id = (await service.send(bot_id, (await env.draft())["id"]))["id"]
        base = f"/broadcasts/{bot_id}/{broadcast_id}"

        async def status(wanted: str) -> bool:
            row = await service.get(bot_id, broadcast_id)
            return bool(row["status"] == wanted and row["sent"] > 0)

        await eventually(lambda: status("sending"))
        assert (await http.post(f"{base}/pause", data={"csrf": csrf})).status_code == 303
        paused = await http.get(base)
        assert (
            f'action="{base}/resume"' in paused.text and f'action="{base}/pause"' not in paused.text
        )
        assert 'hx-trigger="every 2s"' in paused.text  # paused may still move: it polls
        assert (await http.post(f"{base}/resume", data={"csrf": csrf})).status_code == 303
        assert (await service.get(bot_id, broadcast_id))["status"] == "sending"
        assert (await http.post(f"{base}/cancel", data={"csrf": csrf})).status_code == 303
        cancelled = await http.get(f"{base}/progress", headers=HX)
        assert "Cancelled" in cancelled.text and "hx-trigger" not in cancelled.text
        row = await service.get(bot_id, broadcast_id)
        assert row["status"] == "cancelled" and row["sent"] < 200
        resumed = await http.post(f"{base}/resume", data={"csrf": csrf})
        assert resumed.status_code == 409 and "The broadcast is Cancelled" in resumed.text
        no_csrf = await http.post(f"{base}/pause")
        assert no_csrf.status_code == 403
        missing = await http.post(f"/broadcasts/{bot_id}/999999/pause", data={"csrf": csrf})
        assert missing.status_code == 404
    assert await kinds(pool, broadcast_id) == [
        "broadcast.pause",
        "broadcast.resume",
        "broadcast.cancel",
    ]


async def test_an_analyst_reads_but_cannot_change(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with panel_env(pool, db_dsn, tmp_path, people=3) as env, client(env.app) as http:
        draft = await env.draft("Read only")
        bot_id, broadcast_id = env.bot["id"], draft["id"]
        base = f"/broadcasts/{bot_id}/{broadcast_id}"
        await sign_in(http, await add_member(pool, "analyst"))
        csrf = await csrf_of(http, "/account")
        listed = await http.get("/broadcasts")
        assert "Read only" in listed.text and 'href="/broadcasts/new"' not in listed.text
        page = await http.get(base)
        assert page.status_code == 200 and "Read only" in page.text
        assert "/send" not in page.text and "/edit" not in page.text and "/delete" not in page.text
        for path in ("send", "pause", "resume", "cancel", "delete", "edit"):
            answer = await http.post(f"{base}/{path}", data={"csrf": csrf})
            assert answer.status_code == 403, path
        assert (await http.get("/broadcasts/new")).status_code == 403
        assert (await http.get(f"{base}/edit")).status_code == 403
        counted = await http.get("/broadcasts/audience", params={"bot_id": bot_id}, headers=HX)
        assert counted.status_code == 403
        made = await http.post("/broadcasts", data={"csrf": csrf, **form(env)})
        assert made.status_code == 403
    assert await pool.fetchval("SELECT count(*) FROM broadcasts") == 1
    assert (await env.features.broadcasts.get(bot_id, broadcast_id))["status"] == "draft"


async def test_only_an_owner_or_admin_allows_a_paid_broadcast_and_sees_its_cost(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """L8: an editor is not offered the paid option, a forged one is refused, and so is sending
    an admin's paid draft; an admin sees about what it costs (0.1 Star a person), in English
    and Persian, before sending it."""
    refusal = "Only the owner or an admin may allow a paid broadcast"
    async with panel_env(pool, db_dsn, tmp_path, people=37) as env:
        bot_id = env.bot["id"]
        paid = await env.features.broadcasts.create(
            bot_id, Draft("Fast news", dataclasses.replace(POST, paid=True)), "test"
        )
        base = f"/broadcasts/{bot_id}/{paid['id']}"
        async with client(env.app) as http:
            csrf = await signed_in(env, http, "editor")
            page = await http.get("/broadcasts/new")
            assert 'name="paid"' not in page.text and refusal in page.text
            for action in ("draft", "send"):
                forged = form(env, paid="on", action=action)
                answer = await http.post("/broadcasts", data={"csrf": csrf, **forged})
                assert answer.status_code == 403 and refusal in answer.text
            counted = await http.get(
                "/broadcasts/audience", params={"bot_id": bot_id, "paid": "on"}, headers=HX
            )
            assert "37 people" in counted.text and "Stars" not in counted.text
            detail = await http.get(base)
            assert "about 3.7 Telegram Stars" in detail.text
            assert f'action="{base}/send"' not in detail.text
            refused = await http.post(f"{base}/send", data={"csrf": csrf})
            assert refused.status_code == 403 and refusal in refused.text
        assert await pool.fetchval("SELECT count(*) FROM broadcasts") == 1
        assert (await env.features.broadcasts.get(bot_id, paid["id"]))["status"] == "draft"

        async with client(env.app) as http:
            csrf = await signed_in(env, http, "admin")
            page = await http.get("/broadcasts/new")
            assert 'name="paid"' in page.text and refusal not in page.text
            assert "change from:#f-paid" in page.text
            counted = await http.get(
                "/broadcasts/audience", params={"bot_id": bot_id, "paid": "on"}, headers=HX
            )
            assert "A paid broadcast to them costs about 3.7 Telegram Stars." in counted.text
            detail = await http.get(base)
            assert "It costs about 3.7 Telegram Stars." in detail.text
            assert f'action="{base}/send"' in detail.text
            switched = await http.post(
                "/language", data={"csrf": csrf, "language": "fa", "next": base}
            )
            assert switched.status_code == 303
            persian = await http.get(base)
            assert "حدود ۳٫۷ ستارهٔ تلگرام" in persian.text
            made = await http.post(
                "/broadcasts", data={"csrf": csrf, **form(env, paid="on", action="send")}
            )
            sent = await env.features.broadcasts.get(bot_id, location_id(made))
            assert sent["paid"] and sent["status"] != "draft"


async def test_the_account_telegram_id_and_the_preview_sent_there(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with panel_env(pool, db_dsn, tmp_path, people=3) as env, client(env.app) as http:
        csrf = await signed_in(env, http)
        account = await http.get("/account")
        assert 'name="telegram_id"' in account.text and "Not set" in account.text
        for typed in ("abc", "-5", "0", "12.5", "9" * 17):
            bad = await http.post("/account/telegram", data={"csrf": csrf, "telegram_id": typed})
            assert bad.status_code == 422 and 'id="e-telegram_id"' in bad.text, typed
            assert "positive whole number" in bad.text and f'value="{typed}"' in bad.text

        preview = form(env, action="preview", title="")
        refused = await http.post("/broadcasts", data={"csrf": csrf, **preview})
        assert refused.status_code == 422 and 'id="e-preview"' in refused.text
        assert "Set your Telegram id in your account first" in refused.text
        assert 'href="/account#telegram"' in refused.text

        stranger = int((await env.tg.sim.create_user("Stranger"))["id"])
        await http.post("/account/telegram", data={"csrf": csrf, "telegram_id": str(stranger)})
        unknown = await http.post("/broadcasts", data={"csrf": csrf, **preview})
        assert unknown.status_code == 422 and "Telegram refused the preview (" in unknown.text

        me = env.people[0]
        saved = await http.post("/account/telegram", data={"csrf": csrf, "telegram_id": str(me)})
        assert saved.status_code == 303 and saved.headers["location"] == "/account"
        assert f'value="{me}"' in (await http.get("/account")).text
        sent = await http.post("/broadcasts", data={"csrf": csrf, **preview})
        assert sent.status_code == 200 and "The preview was sent to your Telegram." in sent.text
        assert "More | https://example.com/more</textarea>" in sent.text
        chat = await env.tg.sim.read_chat(me, env.sim_bot["username"])
        assert chat[-1]["text"] == "News of the week"
        assert [b["text"] for b in chat[-1]["buttons"][0]] == ["Read", "More"]
        assert await pool.fetchval("SELECT count(*) FROM broadcasts") == 0  # nothing saved

        persian = await http.post("/account/telegram", data={"csrf": csrf, "telegram_id": "۱۲۳۴"})
        assert persian.status_code == 303
        user_id = await pool.fetchval("SELECT id FROM users WHERE role = 'editor'")
        assert await pool.fetchval("SELECT telegram_id FROM users WHERE id = $1", user_id) == 1234
        await http.post("/account/telegram", data={"csrf": csrf, "telegram_id": " "})
        assert await pool.fetchval("SELECT telegram_id FROM users WHERE id = $1", user_id) is None
    changes = await pool.fetch(
        "SELECT after FROM audit_log WHERE kind = 'account.telegram_id_changed' ORDER BY id"
    )
    assert [c["after"]["telegram_id"] for c in changes] == [stranger, me, 1234, None]


async def test_a_file_is_uploaded_first_and_an_oversized_one_is_refused(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with panel_env(pool, db_dsn, tmp_path, people=3) as env, client(env.app) as http:
        csrf = await signed_in(env, http)
        photo = {"file": ("cover.png", b"\x89PNG fake image bytes", "image/png")}
        fields = {"csrf": csrf, **form(env, title="With a photo")}
        no_storage = await http.post("/broadcasts", data=fields, files=photo)
        assert no_storage.status_code == 409 and 'id="e-file"' in no_storage.text
        assert "Set the bot&#39;s storage chat first" in no_storage.text
        assert 'value="With a photo"' in no_storage.text

        owner = await env.tg.sim.create_user("Owner")
        storage = await env.tg.sim.create_channel("Storage", private=True, owner_id=owner["id"])
        await env.tg.sim.make_admin(storage["id"], env.sim_bot["id"])
        await env.features.bot_settings.set_storage_chat(env.bot["id"], storage["id"])
        made = await http.post("/broadcasts", data=fields, files=photo)
        broadcast = await env.features.broadcasts.get(env.bot["id"], location_id(made))
        assert broadcast["method"] == "sendPhoto" and broadcast["post"]["media_kind"] == "photo"
        assert broadcast["params"]["photo"] == broadcast["post"]["file_id"]
        assert broadcast["params"]["caption"] == "<b>News</b> of the week"

        big = {"file": ("big.bin", b"x" * (UPLOAD_LIMIT + 1), "application/octet-stream")}
        refused = await http.post("/broadcasts", data={**fields, "title": "Too big"}, files=big)
        assert refused.status_code == 413 and 'id="e-file"' in refused.text
        assert "The file is larger than 1 MB" in refused.text
        assert 'value="Too big"' in refused.text
    assert await pool.fetchval("SELECT count(*) FROM broadcasts") == 1
