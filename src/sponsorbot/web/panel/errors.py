"""What the panel says when a feature refuses: one tuple of refusals, one text per refusal.

Services raise `FeatureError`s with a stable `code`; its text in `refusals.REFUSALS` becomes a
sentence in the viewer's language (the service's English message is the fallback). A refusal a
route does not catch becomes a page: "not found" for `NotFound`, else the sentence on a card.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response

from sponsorbot.features.errors import Code, FeatureError, NotFound
from sponsorbot.telegram import TelegramError
from sponsorbot.web.panel.i18n import gettext as _
from sponsorbot.web.panel.refusals import PAGE_STATUS, REFUSALS
from sponsorbot.web.panel.web import Viewer, render, viewer_of

CODES = frozenset(Code)
# What a call to a feature service may end in besides its answer: its own refusal, Telegram's,
# or the network's.
REFUSED: tuple[type[Exception], ...] = (FeatureError, TelegramError, OSError)


def megabytes(size: int) -> str:
    """A size in whole megabytes, for the viewer."""
    return f"{size / (1024 * 1024):.0f}"


def say(code: str, **values: object) -> str | None:
    """The text of a refusal code in the viewer's language (None for a code without one),
    its placeholders filled with `values` or else with the table's own; with neither, the
    translated text is returned unfilled, for the caller to fill."""
    if code not in CODES:
        return None
    refusal = REFUSALS[Code(code)]
    return _(refusal.text, **(values or dict(refusal.values)))


def describe(exc: BaseException) -> str:
    """The refusal in the viewer's language."""
    if not isinstance(exc, FeatureError):
        return _("Telegram could not be reached. Try again in a minute.")
    code = exc.code or ""
    if code == Code.RIGHTS_MISSING and exc.details.get("bot"):
        lacking = exc.details.get("bots") or [exc.details]
        return " ".join(
            _campaign_rights(str(row["bot"]), list(row.get("missing", []))) for row in lacking
        )
    if code == Code.CAMPAIGN_OVERLAP:
        name = exc.details.get("name")
        if not name:
            return _("Another campaign already runs on this channel in one of these bots.")
        # Filled in after translation: a name's digits stay as the owner typed them.
        return str(say(code)) % {"name": str(name)}
    if code == Code.RIGHTS_MISSING and "administrator" in exc.details.get("missing", []):
        return _("The bot is not an administrator there: make it one, then add the channel again.")
    if code == Code.TOO_LARGE:
        return str(say(code, mb=megabytes(int(exc.details.get("limit", 0)))))
    if code == Code.GATE_FULL:
        return str(say(code, n=exc.details.get("most", 0)))
    if code in (Code.POST_TEXT, Code.PREVIEW_REFUSED):
        # Telegram's own words, filled in after translation: its byte offsets keep their
        # Latin digits.
        telegram = str(exc.details.get("telegram") or exc.message)
        return str(say(code)) % {"error": telegram}
    known = say(code)
    if known is not None:
        return known
    if isinstance(exc, NotFound):
        return _("Not found")
    return exc.message


def _campaign_rights(bot: str, missing: list[str]) -> str:
    """A campaign's channel check failed in one of its bots: which bot, which right."""
    if "administrator" in missing:
        text = _(
            "@%(bot)s is not an administrator of this channel: make it one, with the right "
            "“Invite users via link”."
        )
    else:
        text = _(
            "@%(bot)s lacks the right “Invite users via link” in this channel: grant it "
            "in the channel's administrators."
        )
    # Filled in after translation: the bot's username keeps its Latin digits in Persian.
    return text % {"bot": bot}


def text_problem(problem: dict[str, Any]) -> str:
    """Why one of the owner's visitor texts cannot be used (from `set_texts`' refusal)."""
    code = problem.get("problem")
    if code == "too_long":
        return _("Up to %(n)s characters.", n=problem.get("limit", 0))
    if code == "unbalanced":
        return _("A { or } is unbalanced; write {{ and }} for a brace.")
    allowed = list(problem.get("allowed", []))
    if not allowed:
        return _("This text takes no placeholders in braces.")
    names = ", ".join("{" + name + "}" for name in allowed)
    return _("Only these placeholders work here: %(names)s", names=names)


def status_of(exc: BaseException) -> int:
    """The HTTP status a page answering this refusal carries."""
    if isinstance(exc, FeatureError):
        return next((status for cls, status in PAGE_STATUS.items() if isinstance(exc, cls)), 422)
    return 503


async def refusal_page(request: Request, exc: Exception) -> Response:
    """A refusal no route caught: the not-found page, or the refusal on a card."""
    viewer: Viewer | None = getattr(request.state, "viewer", None)
    assert viewer is not None  # panel routes resolve the viewer before they call a service
    if isinstance(exc, NotFound):
        return render(request, viewer, "not_found.html", status=404)
    context = {"message": describe(exc)}
    return render(request, viewer, "refused.html", context, status=status_of(exc))


async def not_found_page(request: Request) -> Response:
    """The panel's not-found page, for an address no page has or an id that is not one (the
    viewer is read here: no route ran to read it)."""
    viewer = await viewer_of(request)
    return render(request, viewer, "not_found.html", status=404)


def bad_path(exc: RequestValidationError) -> bool:
    """Whether a request failed on its path (/campaigns/abc): the page does not exist."""
    return any(tuple(e.get("loc", ()))[:1] == ("path",) for e in exc.errors())
