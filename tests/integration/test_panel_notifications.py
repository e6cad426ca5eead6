"""The Notifications page over HTTP, in English and Persian: a link code for a listed bot only,
quiet hours given both or neither (in either digits), the kinds a role may get, unlinking and
the owner's control bot, audited."""

from __future__ import annotations

from tests.integration.panel_kit import PanelApp, add_member, client, csrf_of, sign_in
from tests.integration.test_panel_content import audit, connect


async def test_a_member_makes_a_code_chooses_alerts_and_the_owner_picks_the_control_bot(
    panel: PanelApp,
) -> None:
    bot = await connect(panel)
    async with client(panel.app) as http:
        await sign_in(http, await add_member(panel.pool, "owner"))
        csrf = await csrf_of(http, "/notifications")
        page = await http.get("/notifications")
        assert page.status_code == 200
        assert "Make a link code" in page.text and f"@{bot['username']}" in page.text
        assert "New orders to review" in page.text and "Control bot" in page.text

        unknown = await http.post("/notifications/code", data={"csrf": csrf, "bot_id": "12345"})
        assert unknown.status_code == 422 and "Choose one of the bots listed" in unknown.text
        junk = await http.post("/notifications/code", data={"csrf": csrf, "bot_id": "x"})
        assert junk.status_code == 422 and "Choose a bot" in junk.text
        made = await http.post("/notifications/code", data={"csrf": csrf, "bot_id": bot["id"]})
        assert made.status_code == 200
        assert f"https://t.me/{bot['username']}?start=team_" in made.text
        assert "works once" in made.text

        half = await http.post(
            "/notifications/prefs", data={"csrf": csrf, "quiet_from": "22:00", "quiet_to": ""}
        )
        assert half.status_code == 422 and "both ends" in half.text
        wrong = await http.post(
            "/notifications/prefs", data={"csrf": csrf, "quiet_from": "25:00", "quiet_to": "7"}
        )
        assert wrong.status_code == 422 and "such as 22:30" in wrong.text
        saved = await http.post(
            "/notifications/prefs",
            data={
                "csrf": csrf,
                "kind": ["order_review", "not_a_kind"],
                "quiet_from": "۲۲:۳۰",
                "quiet_to": "07:00",
                "digest": "on",
            },
        )
        assert saved.status_code == 200 and "Saved." in saved.text
        assert 'value="22:30"' in saved.text and 'value="07:00"' in saved.text
        prefs = await panel.pool.fetchrow(
            "SELECT muted, quiet_from, quiet_to, digest FROM alert_prefs"
        )
        assert prefs["quiet_from"] == 22 * 60 + 30 and prefs["quiet_to"] == 7 * 60
        assert prefs["digest"] and "order_review" not in prefs["muted"]
        assert "dead_updates" in prefs["muted"] and "not_a_kind" not in prefs["muted"]

        chosen = await http.post(
            "/notifications/control-bot", data={"csrf": csrf, "control_bot": bot["id"]}
        )
        assert chosen.status_code == 303
        assert await panel.pool.fetchval("SELECT control_bot FROM workspace") == bot["id"]
        [entry] = await audit(panel.pool, "settings.control_bot")
        assert entry["after"] == {"control_bot": bot["id"]}

        nothing = await http.post("/notifications/unlink", data={"csrf": csrf})
        assert nothing.status_code == 303
        assert await audit(panel.pool, "team.telegram_unlinked") == []


async def test_an_analyst_sees_no_alert_kinds_but_the_digest_and_the_page_reads_in_persian(
    panel: PanelApp,
) -> None:
    await connect(panel)
    async with client(panel.app) as http:
        email = await add_member(panel.pool, "analyst")
        await panel.pool.execute("UPDATE users SET language = 'fa' WHERE email = $1", email)
        await sign_in(http, email)
        page = await http.get("/notifications")
        assert page.status_code == 200
        assert "اعلان‌ها" in page.text and "ساختن کد پیوند" in page.text
        assert 'name="kind"' not in page.text and 'name="digest"' in page.text
        assert "ربات کنترل" not in page.text
