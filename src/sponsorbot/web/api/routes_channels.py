"""Channels, the gate and join requests of a bot."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Response

from sponsorbot.web.api.deps import BotId, ChatId, Editor, Limit, Offset, Reader, Service, UserId
from sponsorbot.web.api.models import (
    ChannelIn,
    ChannelOut,
    GateIn,
    GateOut,
    Page,
)

router = APIRouter()


@router.get("/bots/{bot_id}/channels", response_model=Page[ChannelOut], summary="List channels")
async def list_channels(
    bot_id: BotId, who: Reader, features: Service, limit: Limit = 50, offset: Offset = 0
) -> dict[str, Any]:
    rows, total = await features.channels.list(bot_id, limit, offset)
    return {"items": rows, "total": total, "limit": limit, "offset": offset}


@router.post(
    "/bots/{bot_id}/channels",
    status_code=201,
    response_model=ChannelOut,
    summary="Add a channel (checked live: the bot must be an admin with can_invite_users)",
)
async def add_channel(
    bot_id: BotId, body: ChannelIn, who: Editor, features: Service
) -> dict[str, Any]:
    return await features.channels.add(bot_id, body.ref)


@router.get("/bots/{bot_id}/channels/{chat_id}", response_model=ChannelOut, summary="One channel")
async def get_channel(
    bot_id: BotId, chat_id: ChatId, who: Reader, features: Service
) -> dict[str, Any]:
    return await features.channels.get(bot_id, chat_id)


@router.post(
    "/bots/{bot_id}/channels/{chat_id}/check",
    response_model=ChannelOut,
    summary="Check the bot's rights in a channel now",
)
async def check_channel(
    bot_id: BotId, chat_id: ChatId, who: Editor, features: Service
) -> dict[str, Any]:
    return await features.channels.check(bot_id, chat_id)


@router.delete(
    "/bots/{bot_id}/channels/{chat_id}", status_code=204, summary="Remove a channel (and gate)"
)
async def remove_channel(
    bot_id: BotId, chat_id: ChatId, who: Editor, features: Service
) -> Response:
    await features.channels.remove(bot_id, chat_id)
    return Response(status_code=204)


@router.post(
    "/bots/{bot_id}/channels/{chat_id}/join-requests/{user_id}/{decision}",
    status_code=204,
    summary="Approve or decline a join request through the bot",
)
async def decide_request(
    bot_id: BotId,
    chat_id: ChatId,
    user_id: UserId,
    decision: Literal["approve", "decline"],
    who: Editor,
    features: Service,
) -> Response:
    await features.bot_settings.decide_request(bot_id, chat_id, user_id, decision == "approve")
    return Response(status_code=204)


@router.get("/bots/{bot_id}/gate", response_model=GateOut, summary="The gate's channels")
async def get_gate(bot_id: BotId, who: Reader, features: Service) -> dict[str, Any]:
    return {"channels": await features.bot_settings.gate(bot_id)}


@router.put("/bots/{bot_id}/gate", response_model=GateOut, summary="Set the gate's channels")
async def put_gate(bot_id: BotId, body: GateIn, who: Editor, features: Service) -> dict[str, Any]:
    return {"channels": await features.bot_settings.set_gate(bot_id, body.entries())}
