"""A bot's visitor texts and its uploaders.

The texts that tell an advertiser where and how much to pay take an owner token to change
(docs/adr/0009-payout-owner.md); an admin token changes the others."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from sponsorbot.features.shop.payout import (
    MONEY_TEXTS,
    MONEY_TEXTS_CHANGED,
    money_text_change,
    money_text_changes,
)
from sponsorbot.web.api.audit import audit_call
from sponsorbot.web.api.auth import refuse_unless
from sponsorbot.web.api.deps import Admin, BotId, Reader, Service, UserId
from sponsorbot.web.api.models import TextsIn, TextsOut, UploaderIn, UploaderOut

router = APIRouter()


@router.get("/bots/{bot_id}/texts", response_model=TextsOut, summary="The visitor's texts")
async def get_texts(bot_id: BotId, who: Reader, features: Service) -> dict[str, Any]:
    return await features.bot_settings.texts(bot_id)


@router.put(
    "/bots/{bot_id}/texts",
    response_model=TextsOut,
    summary="Override visitor texts",
    description="Replaces every override. Changing a text that says where or how much to pay ("
    + ", ".join(f"`{key}`" for key in sorted(MONEY_TEXTS))
    + ") takes an owner token (403 otherwise); an admin token sends those as they are stored.",
)
async def put_texts(
    request: Request, bot_id: BotId, body: TextsIn, who: Admin, features: Service
) -> dict[str, Any]:
    bot = await features.bots.get(bot_id)
    before = (await features.bot_settings.texts(bot_id))["overrides"]
    # Compared with what is stored, an empty text being the default: a PUT replaces every
    # override, so leaving out a stored money text would reset it, which is a change too.
    wanted = {lang: {k: t for k, t in texts.items() if t} for lang, texts in body.overrides.items()}
    changed = money_text_changes(before, wanted)
    if changed:
        refuse_unless(
            who,
            "shop.money",
            "only an owner token changes the texts that say where or how much to pay; "
            f"send these as they are stored: {', '.join(changed)}",
        )
    saved = await features.bot_settings.set_texts(bot_id, body.overrides)
    change = money_text_change(before, saved["overrides"])
    if change is not None:  # what the owner's dashboard warns about for a week
        await audit_call(request, who, MONEY_TEXTS_CHANGED, f"@{bot.username}", *change)
    return saved


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
