"""What panel routes depend on: the viewer with a permission, named once for every page."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Path

from sponsorbot.web.panel.web import Viewer, public, require

Public = Annotated[Viewer, Depends(public())]
View = Annotated[Viewer, Depends(require("view"))]
Account = Annotated[Viewer, Depends(require("account"))]
Edit = Annotated[Viewer, Depends(require("content"))]
ManageBots = Annotated[Viewer, Depends(require("bots"))]
RemoveBots = Annotated[Viewer, Depends(require("bots.remove"))]
ManageSettings = Annotated[Viewer, Depends(require("settings"))]
Team = Annotated[Viewer, Depends(require("team"))]
Audit = Annotated[Viewer, Depends(require("audit"))]
# An id PostgreSQL's bigint can hold: a longer one typed into the address bar is a 422, not a
# database error.
Id = Annotated[int, Path(ge=1, lt=2**63)]
