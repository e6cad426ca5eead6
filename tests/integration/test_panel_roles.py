"""Every panel route, with every role and signed out: allowed, 403, or sent to sign in.

The table below is the panel's access policy. A route added without an entry here fails
`test_every_panel_route_is_in_the_policy`; a route whose check is missing or wrong fails the
walk, because each request is really made.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from fastapi.routing import APIRoute

from sponsorbot.features.accounts.security import digest
from sponsorbot.features.accounts.users import start_session
from sponsorbot.web.panel.web import SESSION_COOKIE
from tests.integration.panel_kit import PanelApp, add_member, client

ROLES = ("owner", "admin", "editor", "analyst")
PUBLIC = "public"
EVERYONE = frozenset(ROLES)
EDITORS = frozenset({"owner", "admin", "editor"})
MANAGERS = frozenset({"owner", "admin"})
OWNER = frozenset({"owner"})

POLICY: dict[tuple[str, str], frozenset[str] | str] = {
    ("GET", "/setup"): PUBLIC,
    ("POST", "/setup"): PUBLIC,
    ("GET", "/signin"): PUBLIC,
    ("POST", "/signin"): PUBLIC,
    ("GET", "/signin/two-step"): PUBLIC,
    ("POST", "/signin/two-step"): PUBLIC,
    ("POST", "/signout"): PUBLIC,
    ("POST", "/language"): PUBLIC,
    ("GET", "/invite/{token}"): PUBLIC,
    ("POST", "/invite/{token}"): PUBLIC,
    ("GET", "/reset/{token}"): PUBLIC,
    ("POST", "/reset/{token}"): PUBLIC,
    ("POST", "/signout/everywhere"): EVERYONE,
    ("GET", "/"): EVERYONE,
    ("GET", "/stats"): EVERYONE,
    ("GET", "/stats.csv"): EVERYONE,
    ("GET", "/bots"): EVERYONE,
    ("POST", "/bots"): MANAGERS,
    ("POST", "/bots/{bot_id}/pause"): MANAGERS,
    ("POST", "/bots/{bot_id}/resume"): MANAGERS,
    ("POST", "/bots/{bot_id}/redrive"): MANAGERS,
    ("GET", "/bots/{bot_id}/remove"): OWNER,
    ("POST", "/bots/{bot_id}/remove"): OWNER,
    ("GET", "/bots/{bot_id}/channels"): EVERYONE,
    ("POST", "/bots/{bot_id}/channels"): EDITORS,
    ("POST", "/bots/{bot_id}/channels/{chat_id}/check"): EDITORS,
    ("POST", "/bots/{bot_id}/gate"): EDITORS,
    ("POST", "/bots/{bot_id}/gate/order"): EDITORS,
    ("GET", "/bots/{bot_id}/settings"): MANAGERS,
    ("POST", "/bots/{bot_id}/mode"): MANAGERS,
    ("POST", "/bots/{bot_id}/storage"): MANAGERS,
    ("POST", "/bots/{bot_id}/texts"): MANAGERS,
    ("POST", "/bots/{bot_id}/token"): MANAGERS,
    ("GET", "/bots/{bot_id}/content"): EVERYONE,
    ("POST", "/bots/{bot_id}/content"): EDITORS,
    ("POST", "/bots/{bot_id}/content/upload"): EDITORS,
    ("POST", "/bots/{bot_id}/content/{content_id}/toggle"): EDITORS,
    ("POST", "/bots/{bot_id}/content/{content_id}/options"): EDITORS,
    ("POST", "/bots/{bot_id}/uploaders"): MANAGERS,
    ("POST", "/bots/{bot_id}/uploaders/{user_id}/remove"): MANAGERS,
    ("GET", "/tokens"): MANAGERS,
    ("POST", "/tokens"): MANAGERS,
    ("POST", "/tokens/{token_id}/revoke"): MANAGERS,
    ("GET", "/settings"): MANAGERS,
    ("POST", "/settings"): MANAGERS,
    ("GET", "/team"): OWNER,
    ("POST", "/team/invitations"): OWNER,
    ("POST", "/team/invitations/{invitation_id}/revoke"): OWNER,
    ("POST", "/team/{user_id}/role"): OWNER,
    ("POST", "/team/{user_id}/remove"): OWNER,
    ("POST", "/team/{user_id}/reset"): OWNER,
    ("GET", "/audit"): MANAGERS,
    ("GET", "/campaigns"): EVERYONE,
    ("GET", "/campaigns/new"): EDITORS,
    ("POST", "/campaigns"): EDITORS,
    ("GET", "/campaigns/{campaign_id}"): EVERYONE,
    ("GET", "/campaigns/{campaign_id}/edit"): EDITORS,
    ("POST", "/campaigns/{campaign_id}/edit"): EDITORS,
    ("POST", "/campaigns/{campaign_id}/pause"): EDITORS,
    ("POST", "/campaigns/{campaign_id}/resume"): EDITORS,
    ("POST", "/campaigns/{campaign_id}/end"): EDITORS,
    ("POST", "/campaigns/{campaign_id}/report/rotate"): EDITORS,
    ("POST", "/campaigns/{campaign_id}/report/revoke"): EDITORS,
    ("GET", "/broadcasts"): EVERYONE,
    ("GET", "/broadcasts/new"): EDITORS,
    ("POST", "/broadcasts"): EDITORS,
    ("GET", "/broadcasts/audience"): EDITORS,
    ("GET", "/broadcasts/{bot_id}/{broadcast_id}"): EVERYONE,
    ("GET", "/broadcasts/{bot_id}/{broadcast_id}/progress"): EVERYONE,
    ("GET", "/broadcasts/{bot_id}/{broadcast_id}/edit"): EDITORS,
    ("POST", "/broadcasts/{bot_id}/{broadcast_id}/edit"): EDITORS,
    ("POST", "/broadcasts/{bot_id}/{broadcast_id}/send"): EDITORS,
    ("POST", "/broadcasts/{bot_id}/{broadcast_id}/pause"): EDITORS,
    ("POST", "/broadcasts/{bot_id}/{broadcast_id}/resume"): EDITORS,
    ("POST", "/broadcasts/{bot_id}/{broadcast_id}/cancel"): EDITORS,
    ("POST", "/broadcasts/{bot_id}/{broadcast_id}/delete"): EDITORS,
    ("GET", "/r/{token}"): PUBLIC,
    ("GET", "/bots/{bot_id}/shop"): EVERYONE,
    ("POST", "/bots/{bot_id}/shop"): MANAGERS,
    ("GET", "/bots/{bot_id}/shop/products"): EVERYONE,
    ("GET", "/bots/{bot_id}/shop/products/new"): MANAGERS,
    ("POST", "/bots/{bot_id}/shop/products"): MANAGERS,
    ("GET", "/bots/{bot_id}/shop/products/{product_id}/edit"): MANAGERS,
    ("POST", "/bots/{bot_id}/shop/products/{product_id}/edit"): MANAGERS,
    ("POST", "/bots/{bot_id}/shop/products/{product_id}/delete"): MANAGERS,
    ("GET", "/shop/orders"): EVERYONE,
    ("GET", "/shop/orders/{order_id}"): EVERYONE,
    ("POST", "/shop/orders/{order_id}/approve"): MANAGERS,
    ("POST", "/shop/orders/{order_id}/reject"): MANAGERS,
    ("POST", "/shop/orders/{order_id}/ask-change"): MANAGERS,
    ("POST", "/shop/orders/{order_id}/cancel"): MANAGERS,
    ("POST", "/shop/orders/{order_id}/mark-paid"): MANAGERS,
    ("POST", "/shop/orders/{order_id}/mark-refunded"): MANAGERS,
    ("POST", "/shop/orders/{order_id}/hash"): MANAGERS,
    ("GET", "/shop/payments"): EVERYONE,
    ("GET", "/shop/transfers"): EVERYONE,
    ("POST", "/shop/transfers/{transfer_id}/assign"): MANAGERS,
    ("POST", "/shop/transfers/{transfer_id}/returned"): MANAGERS,
    ("GET", "/visitors"): EVERYONE,
    ("GET", "/visitors/{bot_id}/{user_id}"): EVERYONE,
    ("GET", "/account"): EVERYONE,
    ("GET", "/account/two-step"): EVERYONE,
    ("POST", "/account/two-step"): EVERYONE,
    ("POST", "/account/two-step/off"): EVERYONE,
    ("POST", "/account/password"): EVERYONE,
    ("POST", "/account/two-step/recovery-codes"): EVERYONE,
    ("POST", "/account/telegram"): EVERYONE,
    ("GET", "/notifications"): EVERYONE,
    ("POST", "/notifications/code"): EVERYONE,
    ("POST", "/notifications/unlink"): EVERYONE,
    ("POST", "/notifications/prefs"): EVERYONE,
    ("POST", "/notifications/control-bot"): OWNER,
}


def api_routes(routes: list[Any]) -> Iterator[APIRoute]:
    # FastAPI keeps included routers as wrappers; the panel's routers carry no prefix.
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
        elif hasattr(route, "original_router"):
            yield from api_routes(route.original_router.routes)


def panel_routes(panel: PanelApp) -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for route in api_routes(panel.app.routes):
        if "panel" in route.tags:
            found.update((m, route.path) for m in route.methods or ())
    return found


def concrete(path: str) -> str:
    # Ids nobody has: an allowed role gets past the check and finds nothing; nothing changes.
    return re.sub(r"\{[a-z_]+\}", "999999", path)


async def test_every_panel_route_is_in_the_policy(panel: PanelApp) -> None:
    assert panel_routes(panel) == set(POLICY), "add the new route to POLICY with its roles"


async def test_every_route_answers_each_role_as_the_policy_says(panel: PanelApp) -> None:
    user_ids = {}
    for role in ROLES:
        await add_member(panel.pool, role)
        user_ids[role] = await panel.pool.fetchval("SELECT id FROM users WHERE role = $1", role)
    failures: list[str] = []
    for (method, path), allowed in sorted(POLICY.items()):
        if allowed == PUBLIC:
            continue
        url = concrete(path)
        async with client(panel.app) as http:
            anonymous = await http.request(method, url)
            if anonymous.status_code != 303 or not anonymous.headers["location"].startswith(
                "/signin"
            ):
                failures.append(f"{method} {path} signed out: {anonymous.status_code}")
        for role in ROLES:
            now = panel.clock()
            session = await start_session(
                panel.pool,
                user_ids[role],
                "active",
                now + panel.app.state.panel.config.idle_timeout,
                now,
                None,
                None,
            )
            csrf = await panel.pool.fetchval(
                "SELECT csrf_token FROM panel_sessions WHERE id_hash = $1", digest(session)
            )
            async with client(panel.app) as http:
                http.cookies.set(SESSION_COOKIE, session)
                response = await http.request(method, url, headers={"X-CSRF-Token": csrf})
            expected_forbidden = role not in allowed
            if (response.status_code == 403) != expected_forbidden:
                failures.append(f"{method} {path} as {role}: {response.status_code}")
            if response.status_code >= 500:
                failures.append(f"{method} {path} as {role}: server error")
    assert not failures, "\n".join(failures)


async def test_public_routes_open_without_signing_in(panel: PanelApp) -> None:
    async with client(panel.app) as http:
        for (method, path), allowed in POLICY.items():
            if allowed == PUBLIC and method == "GET":
                response = await http.get(concrete(path))
                assert response.status_code in (200, 303, 404), (path, response.status_code)
                assert response.status_code != 303 or "two-step" in path
