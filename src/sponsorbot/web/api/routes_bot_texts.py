"""A bot's visitor texts and its uploaders."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response

from sponsorbot.web.api.deps import Admin, BotId, Reader, Service, UserId
from sponsorbot.web.api.models import TextsIn, TextsOut, UploaderIn, UploaderOut

router = APIRouter()


@router.get("/bots/{bot_id}/texts", response_model=TextsOut, summary="The visitor's texts")
async def get_texts(bot_id: BotId, who: Reader, features: Service) -> dict[str, Any]:
    return await features.bot_settings.texts(bot_id)


@router.put("/bots/{bot_id}/texts", response_model=TextsOut, summary="Override visitor texts")
async def put_texts(bot_id: BotId, body: TextsIn, who: Admin, features: Service) -> dict[str, Any]:
    return await features.bot_settings.set_texts(bot_id, body.overrides)


@router.get(
    "/bots/{bot_id}/uploaders", response_model=list[UploaderOut], summary="Telegram uploaders"
)
async def list_uploaders(bot_id: BotId, who: Reader, features: Service) -> list[dict[str, Any]]:
    return await features.bot_settings.uploaders(bot_id)


@router.post(
    "/bots/{bot_id}/uploaders", status_code=201, response_model=UploaderOut, summary="Add one"
)
async def add_uploader(
    bot_id: BotId, body: UploaderIn, who: Admin, features: Service
) -> dict[str, Any]:
    return await features.bot_settings.add_uploader(bot_id, body.user_id, body.note)


@router.delete("/bots/{bot_id}/uploaders/{user_id}", status_code=204, summary="Remove one")
async def remove_uploader(
    bot_id: BotId, user_id: UserId, who: Admin, features: Service
) -> Response:
    await features.bot_settings.remove_uploader(bot_id, user_id)
    return Response(status_code=204)
