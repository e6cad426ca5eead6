"""Owner API tokens: list, create (shown once), revoke."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fastapi import APIRouter, Response

from sponsorbot.web.api.deps import Limit, Offset, RowId, Service, TokenAdmin
from sponsorbot.web.api.models import Page, TokenIn, TokenOut

router = APIRouter()


@router.get("/tokens", response_model=Page[TokenOut], summary="List API tokens")
async def list_tokens(
    who: TokenAdmin, features: Service, limit: Limit = 50, offset: Offset = 0
) -> dict[str, Any]:
    rows, total = await features.tokens.all(limit, offset)
    return {"items": rows, "total": total, "limit": limit, "offset": offset}


@router.post(
    "/tokens",
    status_code=201,
    response_model=TokenOut,
    summary="Create an API token (no role above the caller's; it belongs to the caller's maker)",
)
async def create_token(body: TokenIn, who: TokenAdmin, features: Service) -> dict[str, Any]:
    days = body.expires_in_days
    row, token = await features.tokens.create(
        body.name,
        body.role,
        granted_by=who.role,
        created_by=who.user_id,
        expires_in=timedelta(days=days) if days is not None else None,
    )
    return {**row, "token": token}


@router.delete(
    "/tokens/{token_id}",
    status_code=204,
    summary="Revoke an API token (none of a role above the caller's)",
)
async def revoke_token(token_id: RowId, who: TokenAdmin, features: Service) -> Response:
    await features.tokens.revoke(token_id, revoked_by=who.role)
    return Response(status_code=204)
