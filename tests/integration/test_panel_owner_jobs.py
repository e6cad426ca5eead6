"""Two owner jobs done in the panel, not only through the owner API: replacing a bot's revoked
token on its settings page, and adding or removing its uploaders on its content page."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tests.integration.panel_kit import PanelApp, add_member, client, csrf_of, sign_in
from tests.integration.test_panel_content import audit, connect


async def test_a_revoked_token_is_replaced_on_the_bot_settings_page(
    panel: PanelApp, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    bot = await connect(panel)
    sim: Any = panel.sim
    other = await sim.create_bot("someone_elses_bot")
    new_token = await sim.revoke_token(bot["username"])
    settings = f"/bots/{bot['id']}/settings"
    async with client(panel.app) as http:
        await sign_in(http, await add_member(panel.pool, "admin"))
        csrf = await csrf_of(http, settings)
        page = await http.get(settings)
        assert 'id="token"' in page.text and "Replace token" in page.text
        assert 'name="token" type="password"' in page.text

        async def replace(token: str) -> Any:
            return await http.post(f"/bots/{bot['id']}/token", data={"csrf": csrf, "token": token})

        empty = await replace("  ")
        assert empty.status_code == 422 and "Paste the new token" in empty.text
        foreign = await replace(other["token"])
        assert foreign.status_code == 422
        assert f"belongs to another bot (id {other['id']})" in foreign.text
        assert f"@{bot['username']} (id {bot['id']})" in foreign.text
        revoked = await replace(bot["token"])
        assert revoked.status_code == 422 and "Telegram refused this token" in revoked.text
        malformed = await replace(f"{bot['id']}:short")
        assert malformed.status_code == 422 and "This is not a bot token" in malformed.text
        for refused in (foreign, revoked):
            # A refused token is pasted again: never written back into the page.
            assert other["token"] not in refused.text and bot["token"] not in refused.text
        assert await audit(panel.pool, "bot.token_replaced") == []

        done = await replace(new_token)
        assert done.status_code == 303
        assert done.headers["location"] == f"{settings}?saved=token#token"
        shown = await http.get(done.headers["location"])
        assert "The new token is saved" in shown.text and f"…{new_token[-4:]}" in shown.text
        assert new_token not in shown.text
    assert await panel.services.bots.token(bot["id"]) == new_token
    [entry] = await audit(panel.pool, "bot.token_replaced")
    assert entry["target"] == f"@{bot['username']}"
    assert entry["before"] == {"token_tail": bot["token"][-4:], "status": "active"}
    assert entry["after"] == {"token_tail": new_token[-4:], "status": "active"}
    assert new_token not in caplog.text
    assert other["token"] not in caplog.text


async def test_the_other_bot_error_reads_in_persian(panel: PanelApp) -> None:
    bot = await connect(panel)
    other = await panel.sim.create_bot("persian_other_bot")  # type: ignore[attr-defined]
    async with client(panel.app) as http:
        email = await add_member(panel.pool, "owner")
        await panel.pool.execute("UPDATE users SET language = 'fa' WHERE email = $1", email)
        await sign_in(http, email)
        csrf = await csrf_of(http, f"/bots/{bot['id']}/settings")
        page = await http.get(f"/bots/{bot['id']}/settings")
        assert "جایگزینی توکن" in page.text and "توکن تازه" in page.text
        foreign = await http.post(
            f"/bots/{bot['id']}/token", data={"csrf": csrf, "token": other["token"]}
        )
        assert foreign.status_code == 422
        assert "این توکن مال ربات دیگری است" in foreign.text and str(other["id"]) in foreign.text


async def test_uploaders_are_added_and_removed_on_the_content_page(panel: PanelApp) -> None:
    bot = await connect(panel)
    content = f"/bots/{bot['id']}/content"
    async with client(panel.app) as http:
        await sign_in(http, await add_member(panel.pool, "admin"))
        csrf = await csrf_of(http, content)
        page = await http.get(content)
        assert 'id="uploaders"' in page.text and 'id="no-uploaders"' in page.text

        async def add(user_id: str, note: str = "") -> Any:
            data = {"csrf": csrf, "user_id": user_id, "note": note}
            return await http.post(f"/bots/{bot['id']}/uploaders", data=data)

        for wrong in ("12a", "@sara", "0", "99999999999999999999"):
            refused = await add(wrong, "Sara, films")
            assert refused.status_code == 422, wrong
            assert "digits only, like 123456789" in refused.text
            # What was typed is kept: nothing to type again.
            assert f'value="{wrong}"' in refused.text and 'value="Sara, films"' in refused.text
        added = await add(" 5550001 ", "Sara, films")
        assert added.status_code == 303 and added.headers["location"].endswith("#uploaders")
        twice = await add("5550001", "again")
        assert twice.status_code == 422 and "an uploader already" in twice.text
        assert 'value="again"' in twice.text
        rows = await panel.services.bot_settings.uploaders(bot["id"])
        assert [(r["user_id"], r["note"]) for r in rows] == [(5550001, "Sara, films")]
        listed = await http.get(content)
        assert 'id="uploader-5550001"' in listed.text and "Sara, films" in listed.text

        removed = await http.post(
            f"/bots/{bot['id']}/uploaders/5550001/remove", data={"csrf": csrf}
        )
        assert removed.status_code == 303
        assert await panel.services.bot_settings.uploaders(bot["id"]) == []
        gone = await http.post(f"/bots/{bot['id']}/uploaders/5550001/remove", data={"csrf": csrf})
        assert gone.status_code == 404
    [added_entry] = await audit(panel.pool, "bot.uploader_added")
    assert added_entry["after"] == {"user_id": 5550001, "note": "Sara, films"}
    [removed_entry] = await audit(panel.pool, "bot.uploader_removed")
    assert removed_entry["before"] == {"user_id": 5550001, "note": "Sara, films"}
    assert removed_entry["target"] == f"@{bot['username']}"


async def test_an_editor_reads_the_uploaders_but_cannot_change_them(panel: PanelApp) -> None:
    bot = await connect(panel)
    await panel.services.bot_settings.add_uploader(bot["id"], 7770001, "Reza")
    async with client(panel.app) as http:
        await sign_in(http, await add_member(panel.pool, "editor"))
        page = await http.get(f"/bots/{bot['id']}/content")
        assert 'id="uploader-7770001"' in page.text and "Reza" in page.text
        assert f"/bots/{bot['id']}/uploaders" not in page.text
        assert "An owner or admin adds and removes uploaders." in page.text
