"""The bots page: connect a bot by its token, pause, resume, re-drive, remove."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from sponsorbot.web.deps import services_of
from sponsorbot.web.panel.deps import ManageBots, RemoveBots, View
from sponsorbot.web.panel.errors import REFUSED, describe
from sponsorbot.web.panel.i18n import gettext as _
from sponsorbot.web.panel.web import (
    Viewer,
    audit,
    redirect,
    render,
)

router = APIRouter(include_in_schema=False, tags=["panel"])


async def _bots_page(
    request: Request, viewer: Viewer, values: dict[str, str], errors: dict[str, str], status: int
) -> Response:
    bots = services_of(request).bots
    context = {
        "bots": await bots.all(),
        "values": values,
        "errors": errors,
        "default_mode": bots.default_mode(),
        "webhook_possible": bots.webhook_possible,
    }
    return render(request, viewer, "bots.html", context, status)


@router.get("/bots")
async def bots_page(request: Request, viewer: View) -> Response:
    """Every bot, shown by username and the last 4 characters of its token."""
    return await _bots_page(request, viewer, {}, {}, 200)


@router.post("/bots")
async def bots_add(request: Request, viewer: ManageBots) -> Response:
    """Add a bot by token: checked live with Telegram before it is saved."""
    bots = services_of(request).bots
    form = await request.form()
    token = str(form.get("token", "")).strip()
    mode = str(form.get("mode", "")) or None
    if mode not in (None, "polling", "webhook"):
        mode = None
    if not token:
        errors = {"token": _("Paste the token @BotFather gave you.")}
        return await _bots_page(request, viewer, {}, errors, 422)
    try:
        bot = await bots.add(token, mode)
    except REFUSED as exc:
        # The token is never echoed back into the form: the owner pastes it again.
        return await _bots_page(request, viewer, {}, {"token": describe(exc)}, 422)
    await audit(
        request,
        viewer,
        "bot.added",
        f"@{bot.username}",
        after={"id": bot.id, "username": bot.username, "mode": bot.mode, "token": token},
    )
    return redirect(request, "/bots")


async def _bot_action(request: Request, viewer: Viewer, bot_id: int, action: str) -> Response:
    bots = services_of(request).bots
    before = await bots.get(bot_id)
    try:
        change = bots.pause if action == "paused" else bots.resume
        after = await change(bot_id)
    except REFUSED as exc:
        return await _bots_page(request, viewer, {}, {f"bot-{bot_id}": describe(exc)}, 422)
    await audit(
        request,
        viewer,
        f"bot.{action}",
        f"@{before.username}",
        before={"status": before.status},
        after={"status": after.status},
    )
    return redirect(request, "/bots")


@router.post("/bots/{bot_id}/pause")
async def bot_pause(request: Request, bot_id: int, viewer: ManageBots) -> Response:
    """Stop taking and sending updates for a bot."""
    return await _bot_action(request, viewer, bot_id, "paused")


@router.post("/bots/{bot_id}/resume")
async def bot_resume(request: Request, bot_id: int, viewer: ManageBots) -> Response:
    """Serve a paused bot again."""
    return await _bot_action(request, viewer, bot_id, "resumed")


@router.post("/bots/{bot_id}/redrive")
async def bot_redrive(request: Request, bot_id: int, viewer: ManageBots) -> Response:
    """Queue the bot's dead updates and given-up messages again (after an outage or a fix):
    what gave up in the last 24 hours, but a cancelled broadcast's messages (ADR 0005)."""
    bots = services_of(request).bots
    bot = await bots.get(bot_id)
    done = await bots.redrive(bot_id)
    await audit(
        request,
        viewer,
        "bot.redriven",
        f"@{bot.username}",
        after={"updates": done.updates, "messages": done.messages},
    )
    return redirect(request, "/")


@router.get("/bots/{bot_id}/remove")
async def bot_remove_confirm(request: Request, bot_id: int, viewer: RemoveBots) -> Response:
    """Ask before removing: it deletes everything queued for the bot."""
    bot = await services_of(request).bots.get(bot_id)
    return render(request, viewer, "bot_remove.html", {"bot": bot})


@router.post("/bots/{bot_id}/remove")
async def bot_remove(request: Request, bot_id: int, viewer: RemoveBots) -> Response:
    """Remove a bot for good (owner only)."""
    bots = services_of(request).bots
    bot = await bots.get(bot_id)
    await bots.remove(bot_id)
    await audit(
        request,
        viewer,
        "bot.removed",
        f"@{bot.username}",
        before={"id": bot.id, "username": bot.username, "mode": bot.mode},
    )
    return redirect(request, "/bots")
