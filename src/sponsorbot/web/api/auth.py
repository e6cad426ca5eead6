"""Bearer-token authentication and role checks for the owner API.

Roles: owner and admin may do everything; editor manages content, channels, the gate and
texts (not bots, uploaders or tokens); analyst only reads.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from sponsorbot.features.accounts.api_tokens import ROLES, Principal
from sponsorbot.web.deps import services_of

READ = frozenset(ROLES)
EDIT = frozenset({"owner", "admin", "editor"})
ADMIN = frozenset({"owner", "admin"})

bearer = HTTPBearer(auto_error=False, description="A token from `sponsorbot token create`.")


def require(roles: frozenset[str]) -> Callable[..., Awaitable[Principal]]:
    """A dependency: the caller, when their token is valid and their role one of `roles`."""

    async def check(
        request: Request,
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    ) -> Principal:
        if credentials is None or credentials.scheme.lower() != "bearer":
            raise HTTPException(
                401,
                "send Authorization: Bearer <token> (sponsorbot token create)",
                headers={"WWW-Authenticate": "Bearer"},
            )
        who = await services_of(request).tokens.authenticate(credentials.credentials)
        if who is None:
            raise HTTPException(
                401, "the token is unknown or revoked", headers={"WWW-Authenticate": "Bearer"}
            )
        if who.role not in roles:
            raise HTTPException(403, f"the role {who.role} may not do this")
        return who

    return check
