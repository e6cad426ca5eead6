"""Bots and API tokens."""

from __future__ import annotations

import dataclasses
from typing import Any

from fastapi import APIRouter, Response

from sponsorbot.features.bots.service import Bot
from sponsorbot.features.errors import Invalid
from sponsorbot.web.api.deps import Admin, BotId, BotRemover, Limit, Offset, Reader, Service
from sponsorbot.web.api.models import (
    BotIn,
    BotOut,
    BotPatch,
    BotTokenIn,
    MeOut,
    Page,
    WebhookOut,
)
from sponsorbot.web.deps import Services

router = APIRouter()


async def bot_out(features: Services, bot: Bot) -> BotOut:
    """A bot as the API answers it, with its storage chat."""
    storage = await features.bot_settings.storage_chat(bot.id)
    return BotOut(**dataclasses.asdict(bot), storage_chat_id=storage)


@router.get("/me", response_model=MeOut, summary="Who the token belongs to")
async def me(who: Reader) -> dict[str, Any]:
    return {"token_id": who.token_id, "name": who.name, "role": who.role}


@router.get("/bots", response_model=Page[BotOut], summary="List bots")
async def list_bots(
    who: Reader, features: Service, limit: Limit = 50, offset: Offset = 0
) -> Page[BotOut]:
    bots = await features.bots.all()
    page = [await bot_out(features, b) for b in bots[offset : offset + limit]]
    return Page(items=page, total=len(bots), limit=limit, offset=offset)


@router.post("/bots", status_code=201, response_model=BotOut, summary="Connect a bot")
async def add_bot(body: BotIn, who: Admin, features: Service) -> BotOut:
    return await bot_out(features, await features.bots.add(body.token, body.mode))


@router.get("/bots/{bot_id}", response_model=BotOut, summary="One bot")
async def get_bot(bot_id: BotId, who: Reader, features: Service) -> BotOut:
    return await bot_out(features, await features.bots.get(bot_id))


@router.patch("/bots/{bot_id}", response_model=BotOut, summary="Change mode, status, storage")
async def patch_bot(bot_id: BotId, body: BotPatch, who: Admin, features: Service) -> BotOut:
    bot = await features.bots.get(bot_id)
    if body.storage_chat_id is not None and body.clear_storage_chat:
        raise Invalid("give storage_chat_id or clear_storage_chat, not both")
    if body.storage_chat_id is not None:
        # Checked with Telegram as a channel is when added: a wrong id is refused now.
        await features.contents.check_storage(bot_id, body.storage_chat_id)
        await features.bot_settings.set_storage_chat(bot_id, body.storage_chat_id)
    elif body.clear_storage_chat:
        await features.bot_settings.set_storage_chat(bot_id, None)
    if body.mode is not None and body.mode != bot.mode:
        bot = await features.bots.set_mode(bot_id, body.mode)
    if body.status == "paused" and bot.status != "paused":
        bot = await features.bots.pause(bot_id)
    elif body.status == "active" and bot.status != "active":
        bot = await features.bots.resume(bot_id)
    return await bot_out(features, bot)


@router.post("/bots/{bot_id}/pause", response_model=BotOut, summary="Pause a bot")
async def pause_bot(bot_id: BotId, who: Admin, features: Service) -> BotOut:
    return await bot_out(features, await features.bots.pause(bot_id))


@router.post("/bots/{bot_id}/resume", response_model=BotOut, summary="Resume a bot")
async def resume_bot(bot_id: BotId, who: Admin, features: Service) -> BotOut:
    return await bot_out(features, await features.bots.resume(bot_id))


@router.put(
    "/bots/{bot_id}/token",
    response_model=BotOut,
    summary="Replace the bot's token (after a revoke in @BotFather); checked live with getMe",
)
async def replace_token(bot_id: BotId, body: BotTokenIn, who: Admin, features: Service) -> BotOut:
    return await bot_out(features, await features.bots.replace_token(bot_id, body.token))


@router.delete("/bots/{bot_id}", status_code=204, summary="Remove a bot (deletes its webhook)")
async def remove_bot(bot_id: BotId, who: BotRemover, features: Service) -> Response:
    await features.bots.remove(bot_id)
    return Response(status_code=204)


@router.get("/bots/{bot_id}/webhook", response_model=WebhookOut, summary="Webhook health")
async def webhook(bot_id: BotId, who: Reader, features: Service) -> WebhookOut:
    bot = await features.bots.get(bot_id)
    return WebhookOut(mode=bot.mode, info=await features.bots.webhook_info(bot_id))
