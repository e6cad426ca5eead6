"""An address the panel has no page for answers with its not-found page, in the viewer's
language, signed in or not; the owner API under /api keeps its JSON errors."""

from __future__ import annotations

from sponsorbot.features.accounts.users import set_language
from tests.integration.panel_kit import PanelApp, add_member, client, sign_in


async def test_unknown_addresses_and_bad_ids_show_the_not_found_page(panel: PanelApp) -> None:
    email = await add_member(panel.pool, "owner")
    async with client(panel.app) as http:
        anonymous = await http.get("/nope")
        assert anonymous.status_code == 404
        assert anonymous.headers["content-type"].startswith("text/html")
        assert "Not found" in anonymous.text
        await sign_in(http, email)
        for address in ("/nope", "/campaigns/abc", "/shop/orders/x1", "/campaigns/999999"):
            page = await http.get(address)
            assert page.status_code == 404, address
            assert page.headers["content-type"].startswith("text/html"), address
            assert "Not found" in page.text, address
            assert '"detail"' not in page.text, address
        user_id = await panel.pool.fetchval("SELECT id FROM users WHERE email = $1", email)
        await set_language(panel.pool, user_id, "fa")
        persian = await http.get("/campaigns/abc")
        assert persian.status_code == 404 and 'lang="fa"' in persian.text
        api = await http.get("/api/v1/nope")
        assert api.status_code == 404 and api.json() == {"error": "Not Found"}
        bad_id = await http.get("/api/v1/campaigns/abc")
        assert bad_id.status_code in (401, 422) and bad_id.headers["content-type"].startswith(
            "application/json"
        )
