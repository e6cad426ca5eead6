"""What owner API routes depend on: the caller with a permission, the services, paging, ids."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Path, Query

from sponsorbot.features.accounts.api_tokens import Principal
from sponsorbot.web.api.auth import require
from sponsorbot.web.deps import Services, services_of

# Each alias is one permission of features/accounts/permissions.py, the table the panel uses too.
Reader = Annotated[Principal, Depends(require("view"))]
Editor = Annotated[Principal, Depends(require("content"))]
Admin = Annotated[Principal, Depends(require("bots"))]
TokenAdmin = Annotated[Principal, Depends(require("settings"))]
BotRemover = Annotated[Principal, Depends(require("bots.remove"))]
Service = Annotated[Services, Depends(services_of)]
Limit = Annotated[int, Query(ge=1, le=200)]
Offset = Annotated[int, Query(ge=0, le=10_000_000)]

BIGINT = 2**63 - 1  # the largest id PostgreSQL's bigint holds: beyond it is a 422, never a 500
# Ids in paths: our own ids are positive; Telegram's chat ids may be negative.
BotId = Annotated[int, Path(ge=1, le=BIGINT, description="the bot's id")]
RowId = Annotated[int, Path(ge=1, le=BIGINT)]
ChatId = Annotated[int, Path(ge=-BIGINT, le=BIGINT, description="the Telegram chat id")]
UserId = Annotated[int, Path(ge=1, le=BIGINT, description="the Telegram user id")]
BotFilter = Annotated[int | None, Query(ge=1, le=BIGINT, description="only this bot")]
# Paging newest first: the id to list below, from the page before.
Before = Annotated[
    int | None, Query(ge=1, le=BIGINT, description="the `next_before` of the page before")
]
