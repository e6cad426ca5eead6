"""The owner API's audit trail (ADR 0009): every call under /api/v1 that changes something
(POST, PUT, PATCH, DELETE) and succeeds writes one entry, as `api:<token name>`, through the
same `record()` as the panel.

It is done once, here, around the application, so no route can forget it. The entry is written
as the answer starts and only for a status below 400, so a refused call is never recorded as
done: its kind is `api.<route name>` (`api.put_shop`, `api.create_product`, ...), its target the
path called, and `after` holds the method, the route (as declared, under /api/v1) and the
status. Bodies are not kept (they may be uploads, or hold keys); what a change means for money
is audited by its route.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sponsorbot.db.errors import DB_ERRORS
from sponsorbot.features.accounts.api_tokens import Principal
from sponsorbot.features.accounts.audit import Actor, record
from sponsorbot.web.api.auth import CALLER, actor_name
from sponsorbot.web.panel.web import address_of, panel_of

log = logging.getLogger(__name__)

PREFIX = "/api/v1/"
MUTATING = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def api_actor(request: Request, who: Principal) -> Actor:
    """The audit log's 'who' for an API call: the token by name, on behalf of its maker."""
    return Actor(who.user_id, actor_name(who), address_of(request))


async def audit_call(
    request: Request,
    who: Principal,
    kind: str,
    target: str | None = None,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
) -> None:
    """Write an API caller's change to the audit log, at the panel's clock (as the panel's own
    entries are, so both read alike on the audit page and the dashboard)."""
    panel = panel_of(request)
    actor = api_actor(request, who)
    await record(panel.pool, panel.config.clock(), actor, kind, target, before, after)


class ApiAudit:
    """ASGI middleware: one audit entry for each mutating owner-API call that succeeded."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] not in MUTATING
            or not scope["path"].startswith(PREFIX)
        ):
            await self.app(scope, receive, send)
            return
        # The route's request.state is this dict: the token check leaves the caller in it.
        scope.setdefault("state", {})

        async def send_audited(message: Message) -> None:
            # Before the answer leaves: a client that got its 2xx finds the entry written.
            if message["type"] == "http.response.start" and message["status"] < 400:
                await _audit(scope, message["status"])
            await send(message)

        await self.app(scope, receive, send_audited)


async def _audit(scope: Scope, status: int) -> None:
    request = Request(scope)
    who: Principal | None = scope["state"].get(CALLER)
    if who is None:  # no token was checked: nothing was done on anyone's behalf
        return
    route = scope.get("route")
    after = {"method": scope["method"], "route": getattr(route, "path", None), "status": status}
    kind = f"api.{getattr(route, 'name', None) or 'call'}"
    try:
        await audit_call(request, who, kind, scope["path"], after=after)
    except DB_ERRORS:
        # The change is made; failing its answer would only invite a retry that makes it twice.
        log.exception("the audit entry of %s %s was not written", scope["method"], scope["path"])
