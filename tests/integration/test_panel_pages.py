"""Panel pages over HTTP: team invitations, settings errors, API tokens, audit filters."""

from __future__ import annotations

import re
from datetime import timedelta

from sponsorbot.features.accounts.api_tokens import token_hash
from tests.integration.panel_kit import (
    PASSWORD,
    PanelApp,
    add_member,
    client,
    csrf_of,
    sign_in,
)


async def test_an_invitation_link_makes_a_member_with_its_role_once(panel: PanelApp) -> None:
    owner = await add_member(panel.pool, "owner")
    async with client(panel.app) as http:
        await sign_in(http, owner)
        csrf = await csrf_of(http, "/team")
        bad = await http.post(
            "/team/invitations", data={"csrf": csrf, "email": "nope", "role": "x"}
        )
        assert bad.status_code == 422 and 'id="e-email"' in bad.text
        made = await http.post(
            "/team/invitations", data={"csrf": csrf, "email": "ed@example.com", "role": "editor"}
        )
        link = re.search(r'value="(http://panel.test/invite/[^"]+)"', made.text)
        assert link is not None
        path = link[1].removeprefix("http://panel.test")
    async with client(panel.app) as guest:
        csrf = await csrf_of(guest, path)
        joined = await guest.post(
            path, data={"csrf": csrf, "name": "Ed", "password": PASSWORD, "password2": PASSWORD}
        )
        assert joined.status_code == 303
        assert (await guest.get("/team")).status_code == 403  # an editor has no team page
        assert (await guest.get("/bots")).status_code == 200
        assert (await guest.get(path)).status_code == 404  # used once
    role = await panel.pool.fetchval("SELECT role FROM users WHERE email = 'ed@example.com'")
    assert role == "editor"


async def test_an_invitation_expires_after_72_hours(panel: PanelApp) -> None:
    owner = await add_member(panel.pool, "owner")
    async with client(panel.app) as http:
        await sign_in(http, owner)
        csrf = await csrf_of(http, "/team")
        made = await http.post(
            "/team/invitations", data={"csrf": csrf, "email": "a@example.com", "role": "analyst"}
        )
        link = re.search(r'value="http://panel.test(/invite/[^"]+)"', made.text)
        assert link is not None
        panel.clock.advance(timedelta(hours=72, seconds=1))
        assert (await http.get(link[1])).status_code == 404


async def test_settings_errors_are_shown_next_to_their_field(panel: PanelApp) -> None:
    admin = await add_member(panel.pool, "admin")
    async with client(panel.app) as http:
        await sign_in(http, admin)
        csrf = await csrf_of(http, "/settings")
        response = await http.post(
            "/settings",
            data={"csrf": csrf, "name": "", "time_zone": "Mars/Olympus", "default_language": "fa"},
        )
        assert response.status_code == 422
        assert 'id="e-name"' in response.text and 'id="e-time_zone"' in response.text
        assert await panel.pool.fetchval("SELECT time_zone FROM workspace") == "UTC"


async def test_api_tokens_are_shown_once_stored_hashed_and_revocable(panel: PanelApp) -> None:
    admin = await add_member(panel.pool, "admin")
    async with client(panel.app) as http:
        await sign_in(http, admin)
        csrf = await csrf_of(http, "/tokens")
        too_high = await http.post("/tokens", data={"csrf": csrf, "name": "x", "role": "owner"})
        assert too_high.status_code == 422
        made = await http.post("/tokens", data={"csrf": csrf, "name": "ci", "role": "editor"})
        token = re.search(r'value="(sbt_[^"]+)"', made.text)
        assert token is not None
        assert token[1] not in (await http.get("/tokens")).text
        stored = await panel.pool.fetchrow("SELECT id, token_hash FROM api_tokens")
        assert bytes(stored["token_hash"]) == token_hash(token[1])
        audit = await panel.pool.fetchval(
            "SELECT after::text FROM audit_log WHERE kind = $1", "token.created"
        )
        assert token[1] not in audit and token[1][-4:] in audit
        api = await http.get("/api/v1/bots", headers={"Authorization": f"Bearer {token[1]}"})
        assert api.status_code == 200
        await http.post(f"/tokens/{stored['id']}/revoke", data={"csrf": csrf})
        api = await http.get("/api/v1/bots", headers={"Authorization": f"Bearer {token[1]}"})
        assert api.status_code == 401


async def test_the_audit_log_filters_by_person_and_kind(panel: PanelApp) -> None:
    owner = await add_member(panel.pool, "owner")
    editor = await add_member(panel.pool, "editor")
    for email, password in ((editor, PASSWORD), ("ghost@example.com", "wrong")):
        async with client(panel.app) as other:
            await sign_in(other, email, password)
    async with client(panel.app) as http:
        await sign_in(http, owner)
        owner_id = await panel.pool.fetchval("SELECT id FROM users WHERE role = 'owner'")
        mine = await http.get(f"/audit?person={owner_id}")
        assert mine.text.count("<tr>") == 2  # header and the owner's one sign-in
        failed = await http.get("/audit?kind=signin.failed")
        assert "ghost@example.com" in failed.text and "Editor &lt;" not in failed.text
        everyone = await http.get("/audit?kind=signin")
        assert everyone.text.count("<tr>") == 4


async def test_the_dashboard_offers_a_redrive_of_a_bot_s_dead_updates(panel: PanelApp) -> None:
    """H3: dead updates were only counted; the dashboard now queues them again."""
    await panel.pool.execute(
        "INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path,"
        " webhook_secret_hash) VALUES (77, 'dead_bot', '', 'xxxx', 'polling', 'p', '')"
    )
    await panel.pool.execute(
        "INSERT INTO inbox (bot_id, update_id, kind, chat_key, payload, status, handled_at)"
        " VALUES (77, 1, 'message', 5, '{}', 'dead', now())"
    )
    analyst = await add_member(panel.pool, "analyst")
    async with client(panel.app) as http:
        await sign_in(http, analyst)
        assert "/bots/77/redrive" not in (await http.get("/")).text
    admin = await add_member(panel.pool, "admin")
    async with client(panel.app) as http:
        await sign_in(http, admin)
        page = await http.get("/")
        assert "/bots/77/redrive" in page.text
        csrf = await csrf_of(http, "/")
        done = await http.post("/bots/77/redrive", data={"csrf": csrf})
        assert done.status_code == 303
        assert "/bots/77/redrive" not in (await http.get("/")).text
    status = await panel.pool.fetchval("SELECT status FROM inbox WHERE bot_id = 77")
    assert status == "pending"
    audit = await panel.pool.fetchval(
        "SELECT after::text FROM audit_log WHERE kind = 'bot.redriven'"
    )
    assert '"updates": 1' in audit
