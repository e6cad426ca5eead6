"""What owner API routes depend on: the caller with a role, the services, paging."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query

from sponsorbot.features.accounts.api_tokens import Principal
from sponsorbot.web.api.auth import ADMIN, EDIT, READ, require
from sponsorbot.web.deps import Services, services_of

Reader = Annotated[Principal, Depends(require(READ))]
Editor = Annotated[Principal, Depends(require(EDIT))]
Admin = Annotated[Principal, Depends(require(ADMIN))]
Service = Annotated[Services, Depends(services_of)]
Limit = Annotated[int, Query(ge=1, le=200)]
Offset = Annotated[int, Query(ge=0, le=10_000_000)]
