"""Owner API tokens: list, create (shown once), revoke."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response

from sponsorbot.web.api.deps import Admin, Limit, Offset, Service
from sponsorbot.web.api.models import Page, TokenIn, TokenOut

router = APIRouter()


@router.get("/tokens", response_model=Page[TokenOut], summary="List API tokens")
async def list_tokens(
    who: Admin, features: Service, limit: Limit = 50, offset: Offset = 0
) -> dict[str, Any]:
    rows, total = await features.tokens.all(limit, offset)
    return {"items": rows, "total": total, "limit": limit, "offset": offset}


@router.post("/tokens", status_code=201, response_model=TokenOut, summary="Create an API token")
async def create_token(body: TokenIn, who: Admin, features: Service) -> dict[str, Any]:
    row, token = await features.tokens.create(body.name, body.role, granted_by=who.role)
    return {**row, "token": token}


@router.delete("/tokens/{token_id}", status_code=204, summary="Revoke an API token")
async def revoke_token(token_id: int, who: Admin, features: Service) -> Response:
    await features.tokens.revoke(token_id)
    return Response(status_code=204)
