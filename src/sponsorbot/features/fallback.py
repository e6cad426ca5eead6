"""What no feature took: a button nobody knows still gets its spinner stopped."""

from __future__ import annotations

from typing import Any

from sponsorbot.engine import calls
from sponsorbot.engine.routing import Router
from sponsorbot.engine.unit import Context


def stray_buttons(router: Router) -> Router:
    """Answer any button press left over (an old keyboard, a forged or unknown prefix)."""

    @router.callback_query()
    async def answer(query: Any, ctx: Context) -> None:
        query_id = query.get("id")
        if isinstance(query_id, str):
            ctx.uow.queue(calls.answer_callback(ctx.chat_key, query_id))

    return router
