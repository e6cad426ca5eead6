"""Panel content, bot settings and gate order over HTTP, against the simulated Telegram."""

from __future__ import annotations

import re
from typing import Any

import asyncpg
import httpx

from sponsorbot.features.content.service import NewContent
from tests.integration.panel_kit import PanelApp, add_member, client, csrf_of, sign_in


async def connect(panel: PanelApp) -> dict[str, Any]:
    bot = await panel.sim.create_bot("panel_content_bot")  # type: ignore[attr-defined]
    added = await panel.engine.bots.add(bot["token"], "polling")
    return {**bot, "id": added["id"]}


async def audit(pool: asyncpg.Pool, kind: str) -> list[asyncpg.Record]:
    rows: list[asyncpg.Record] = await pool.fetch(
        "SELECT target, before, after FROM audit_log WHERE kind = $1 ORDER BY id", kind
    )
    return rows


async def signed_in(panel: PanelApp, http: httpx.AsyncClient, role: str = "owner") -> str:
    await sign_in(http, await add_member(panel.pool, role))
    return await csrf_of(http, "/bots")


async def test_search_finds_by_caption_text_or_code_and_pages_keep_it(panel: PanelApp) -> None:
    bot = await connect(panel)
    contents = panel.services.contents
    for i in range(23):
        text = f"March price list {i}" if i % 2 else f"Weekly 100% deal {i}"
        await contents.create(
            bot["id"], NewContent("text", [{"kind": "text", "text": text}], "test")
        )
    made = await contents.create(
        bot["id"], NewContent("text", [{"kind": "text", "text": "x"}], "test", caption="Promo")
    )
    async with client(panel.app) as http:
        await signed_in(panel, http, "analyst")
        base = f"/bots/{bot['id']}/content"
        march = await http.get(base, params={"q": "march"})
        assert "11 items match" in march.text and march.text.count('<li class="item') == 11
        assert (await http.get(base, params={"q": made["code"]})).text.count('<li class="item') == 1
        assert (await http.get(base, params={"q": "promo"})).text.count('<li class="item') == 1
        # "%" is a literal percent sign, not a wildcard that matches every item.
        literal = await http.get(base, params={"q": "100%"})
        assert "12 items match" in literal.text
        first = await http.get(base)
        assert "24 items" in first.text and first.text.count('<li class="item') == 20
        searched = await http.get(base, params={"q": "e", "page": "2"})
        assert 'href="?q=e&amp;page=1"' in searched.text
        nothing = await http.get(base, params={"q": "no such words"})
        assert "Nothing matches" in nothing.text


async def test_upload_needs_a_storage_chat_then_goes_through_telegram(panel: PanelApp) -> None:
    bot = await connect(panel)
    sim: Any = panel.sim
    async with client(panel.app) as http:
        csrf = await signed_in(panel, http, "owner")
        base = f"/bots/{bot['id']}"
        page = await http.get(f"{base}/content")
        assert 'id="no-storage"' in page.text and f"{base}/settings#storage" in page.text
        files = {"file": ("prices.pdf", b"%PDF-1.4 price list", "application/pdf")}
        refused = await http.post(f"{base}/content/upload", data={"csrf": csrf}, files=files)
        assert refused.status_code == 422
        assert re.search(r'id="e-file"\s*>Set the bot&#39;s storage chat first', refused.text)

        wrong = await http.post(f"{base}/storage", data={"csrf": csrf, "storage_chat": "@x"})
        assert wrong.status_code == 422 and 'id="e-storage_chat"' in wrong.text
        owner = await sim.create_user("Owner")
        storage = await sim.create_channel("Storage", private=True, owner_id=owner["id"])
        await sim.make_admin(storage["id"], bot["id"])
        saved = await http.post(
            f"{base}/storage", data={"csrf": csrf, "storage_chat": str(storage["id"])}
        )
        assert saved.status_code == 303
        [changed] = await audit(panel.pool, "bot.storage_changed")
        assert changed["after"] == {"storage_chat_id": storage["id"]}

        uploaded = await http.post(
            f"{base}/content/upload",
            data={"csrf": csrf, "caption": "March prices", "auto_delete": "5"},
            files=files,
        )
        assert uploaded.status_code == 303, uploaded.text
        row = await panel.pool.fetchrow("SELECT kind, items, caption, protect FROM contents")
        assert (row["kind"], row["caption"], row["protect"]) == ("document", "March prices", False)
        assert row["items"][0]["file_id"]
        assert await audit(panel.pool, "content.created")

        panel.app.state.panel.config.upload_limit = 1024
        big = {"file": ("big.bin", b"x" * 2048, "application/octet-stream")}
        too_large = await http.post(f"{base}/content/upload", data={"csrf": csrf}, files=big)
        assert too_large.status_code == 413
        assert 'id="e-file"' in too_large.text and "larger than" in too_large.text
        declared = await http.post(
            f"{base}/content/upload",
            headers={"X-CSRF-Token": csrf},
            data={"x": "y" * 200_000},
            files=big,
        )
        assert declared.status_code == 413  # refused on Content-Length, body unread
        assert await panel.pool.fetchval("SELECT count(*) FROM contents") == 1


async def test_item_options_and_counts(panel: PanelApp) -> None:
    bot = await connect(panel)
    item = await panel.services.contents.create(
        bot["id"], NewContent("text", [{"kind": "text", "text": "hello"}], "test")
    )
    counts = {"started": 5, "gate_shown": 3, "gate_passed": 2, "content_sent": 4}
    for kind, n in counts.items():
        await panel.pool.executemany(
            "INSERT INTO events (bot_id, kind, user_id, content_id) VALUES ($1, $2, $3, $4)",
            [(bot["id"], kind, u, item["id"]) for u in range(n)],
        )
    # An open of an unknown code names no content and is not counted for any item.
    await panel.pool.execute(
        "INSERT INTO events (bot_id, kind, user_id) VALUES ($1, 'started', 9)", bot["id"]
    )
    async with client(panel.app) as http:
        csrf = await signed_in(panel, http, "editor")
        base = f"/bots/{bot['id']}/content"
        page = (await http.get(base)).text
        figures = re.findall(r"<dt>([\w ]+)</dt><dd>(\d+)</dd>", page)
        assert figures == [("Opened", "5"), ("Shown the gate", "3"), ("Passed", "2"), ("Sent", "4")]
        bad = await http.post(
            f"{base}/{item['id']}/options", data={"csrf": csrf, "auto_delete": "99999"}
        )
        assert bad.status_code == 422 and "Minutes from 0" in bad.text
        done = await http.post(
            f"{base}/{item['id']}/options",
            data={"csrf": csrf, "auto_delete": "30", "back": f"{base}?q=hel&page=1"},
        )
        assert done.status_code == 303 and done.headers["location"] == f"{base}?q=hel&page=1"
        away = await http.post(
            f"{base}/{item['id']}/options",
            data={"csrf": csrf, "auto_delete": "30", "back": "https://evil.example/"},
        )
        assert away.headers["location"] == base
    row = await panel.pool.fetchrow("SELECT protect, auto_delete_s FROM contents")
    assert (row["protect"], row["auto_delete_s"]) == (False, 1800)
    [changed] = await audit(panel.pool, "content.changed")  # the repeat changed nothing
    assert changed["before"] == {"protect": True, "auto_delete_s": 0}
    assert changed["after"] == {"protect": False, "auto_delete_s": 1800}


async def test_bot_mode_and_visitor_texts(panel: PanelApp) -> None:
    bot = await connect(panel)
    async with client(panel.app) as http:
        csrf = await signed_in(panel, http, "admin")
        base = f"/bots/{bot['id']}"
        page = await http.get(f"{base}/settings")
        assert 'placeholder="To get this content, please join:' in page.text
        assert "Placeholders:" in page.text and 'lang="fa" dir="rtl"' in page.text
        webhook = await http.post(f"{base}/mode", data={"csrf": csrf, "mode": "webhook"})
        assert webhook.status_code == 422 and "SPONSORBOT_PUBLIC_URL" in webhook.text
        assert await panel.pool.fetchval("SELECT mode FROM bots") == "polling"

        bad = await http.post(
            f"{base}/texts",
            data={"csrf": csrf, "en.join_button": "Join {name}", "fa.welcome": "سلام {"},
        )
        assert bad.status_code == 422
        assert 'id="e-en.join_button"' in bad.text and "{title}" in bad.text
        assert 'id="e-fa.welcome"' in bad.text
        assert "Join {name}" in bad.text  # what was typed stays in the field
        ok = await http.post(
            f"{base}/texts",
            data={
                "csrf": csrf,
                "en.join_button": "Join {title} now",
                "fa.unknown_code": "این پیوند دیگر کار نمی‌کند.",
                "en.welcome": "   ",
            },
        )
        assert ok.status_code == 303
        stored = await panel.pool.fetchval("SELECT texts FROM bot_settings")
        assert stored == {
            "en": {"join_button": "Join {title} now"},
            "fa": {"unknown_code": "این پیوند دیگر کار نمی‌کند."},
        }
        [changed] = await audit(panel.pool, "bot.texts_changed")
        assert changed["before"] == {"en.join_button": None, "fa.unknown_code": None}
        assert changed["after"]["fa.unknown_code"] == "این پیوند دیگر کار نمی‌کند."
        again = (await http.get(f"{base}/settings")).text
        assert ">Join {title} now</textarea>" in again


async def test_the_gate_order_is_posted_and_join_request_options_stay(panel: PanelApp) -> None:
    bot = await connect(panel)
    sim: Any = panel.sim
    owner = await sim.create_user("Owner")
    chats = []
    for name in ("first_news", "second_news", "third_news"):
        channel = await sim.create_channel(name, name, owner_id=owner["id"])
        await sim.make_admin(channel["id"], bot["id"])
        await panel.services.channels.add(bot["id"], f"@{name}")
        chats.append(channel["id"])
    settings = panel.services.bot_settings
    await settings.set_gate(bot["id"], [(chats[0], False), (chats[1], True), (chats[2], False)])
    async with client(panel.app) as http:
        csrf = await signed_in(panel, http, "editor")
        page = await http.get(f"/bots/{bot['id']}/channels")
        assert f'data-sortable="/bots/{bot["id"]}/gate/order"' in page.text
        order = [chats[2], chats[1], chats[0]]
        answer = await http.post(
            f"/bots/{bot['id']}/gate/order",
            data={"order": [str(c) for c in order]},
            headers={"X-CSRF-Token": csrf},
        )
        assert answer.status_code == 204
        no_token = await http.post(f"/bots/{bot['id']}/gate/order", data={"order": "1"})
        assert no_token.status_code == 403
    gate = await settings.gate(bot["id"])
    assert [(g["chat_id"], g["request_counts"]) for g in gate] == [
        (chats[2], False),
        (chats[1], True),
        (chats[0], False),
    ]
    [changed] = await audit(panel.pool, "gate.changed")
    assert changed["after"] == {"channels": order, "requests_count": [chats[1]]}


async def test_channels_ticked_without_an_order_join_the_gate_in_page_order(
    panel: PanelApp,
) -> None:
    bot = await connect(panel)
    sim: Any = panel.sim
    owner = await sim.create_user("Owner")
    chats = []
    for name in ("alpha_news", "beta_news", "gamma_news", "delta_news", "omega_news"):
        channel = await sim.create_channel(name, name, owner_id=owner["id"])
        await sim.make_admin(channel["id"], bot["id"])
        await panel.services.channels.add(bot["id"], f"@{name}")
        chats.append(channel["id"])
    # As a browser sends it: every row's (empty) order field, the ticked ones in page order.
    shown = [chats[3], chats[0], chats[4], chats[1]]
    form: dict[str, Any] = {f"pos_{c}": "" for c in chats}
    form["gate"] = [str(c) for c in shown]
    async with client(panel.app) as http:
        form["csrf"] = await signed_in(panel, http, "editor")
        answer = await http.post(f"/bots/{bot['id']}/gate", data=form)
        assert answer.status_code == 303
    gate = await panel.services.bot_settings.gate(bot["id"])
    assert [g["chat_id"] for g in gate] == shown
