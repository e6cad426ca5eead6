"""Bearer-token authentication and permission checks for the owner API.

The permissions and the roles holding them are the panel's (features/accounts/permissions.py):
analyst reads; editor also manages content, channels, the gate, campaigns and broadcasts;
admin also bots, their texts, uploaders and shop, and API tokens; only the owner removes a bot
or changes where a shop's money goes. The caller is left in the request's state for the audit
(web/api/audit.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from sponsorbot.features.accounts.api_tokens import Principal
from sponsorbot.features.accounts.permissions import PERMISSIONS, allowed
from sponsorbot.web.deps import services_of

bearer = HTTPBearer(auto_error=False, description="A token from `sponsorbot token create`.")
# The request state's name for the caller once their token is checked.
CALLER = "api_caller"


def actor_name(who: Principal) -> str:
    """The caller as the services and the audit log name it: `api:<token name>` (the panel
    reads the prefix back to say "API token …")."""
    return f"api:{who.name}"


def refuse_unless(who: Principal, permission: str, message: str) -> None:
    """403 with `message` when the caller's role does not hold `permission`."""
    if not allowed(permission, who.role):
        raise HTTPException(403, message)


async def authenticate(
    request: Request, credentials: HTTPAuthorizationCredentials | None
) -> Principal:
    """The caller of a valid token; 401 otherwise."""
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise HTTPException(
            401,
            "send Authorization: Bearer <token> (sponsorbot token create)",
            headers={"WWW-Authenticate": "Bearer"},
        )
    who = await services_of(request).tokens.authenticate(credentials.credentials)
    if who is None:
        raise HTTPException(
            401,
            "the token is unknown, revoked or expired",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return who


def require(permission: str) -> Callable[..., Awaitable[Principal]]:
    """A dependency: the caller, when their token is valid and their role holds `permission`."""
    if permission not in PERMISSIONS:
        raise ValueError(f"no permission is called {permission!r}")

    async def check(
        request: Request,
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    ) -> Principal:
        who = await authenticate(request, credentials)
        refuse_unless(who, permission, f"the role {who.role} may not do this")
        setattr(request.state, CALLER, who)
        return who

    return check
